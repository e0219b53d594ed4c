//! `drop7 replay TAPE...`: verifies recorded tapes (`drop7-recorded-game-v2`,
//! formats.md) move by move, trusting no score in them, and prints one JSON
//! line per tape: `{"tape", "valid", "complete", "failure", "score", "level",
//! "moves", "coveredRowsConsumed", "failedAtMove", "error"}`. Exit status 0
//! when every tape is valid and complete, else 1.

use std::io::{self, Write};
use std::path::PathBuf;

use anyhow::{Context, Result};
use clap::Args;
use drop7::tape::{Replay, replay};
use serde::Serialize;

use super::spec::{EngineSel, resolve_engine};

/// Options of `drop7 replay`.
#[derive(Args, Debug)]
pub struct ReplayArgs {
    /// Tape files (JSON, `drop7-recorded-game-v2`); `-` reads one tape from
    /// standard input.
    #[arg(required = true, value_name = "TAPE")]
    pub tapes: Vec<PathBuf>,
    /// Engine that replays: packed (fast) or reference (plain).
    #[arg(long, default_value = "packed", value_name = "ENGINE")]
    pub engine: String,
}

#[derive(Serialize)]
struct Line<'a> {
    tape: String,
    #[serde(flatten)]
    replay: &'a Replay,
}

/// Runs `drop7 replay`; `Ok(false)` when some tape is not valid and complete.
pub fn run(args: &ReplayArgs) -> Result<bool> {
    let engine = resolve_engine(&args.engine, Some("portable"))?;
    let mut out = io::stdout().lock();
    let mut all_ok = true;
    if args.tapes.iter().filter(|p| p.as_os_str() == "-").count() > 1 {
        anyhow::bail!("`-` (standard input) can be given only once");
    }
    for path in &args.tapes {
        let read = if path.as_os_str() == "-" {
            super::read_capped_from(io::stdin().lock())
        } else {
            super::read_capped(path)
        };
        let r = match read {
            Err(e) => bad(format!("cannot read {}: {e}", path.display())),
            Ok(bytes) => match String::from_utf8(bytes) {
                Err(e) => bad(format!("the file is {}", super::not_utf8(e.as_bytes()))),
                Ok(text) => match engine {
                    EngineSel::Packed(_) => {
                        replay(drop7::runner::PackedEngine(drop7::gravity::Portable), &text)
                    }
                    EngineSel::Reference => replay(drop7::runner::ReferenceEngine, &text),
                },
            },
        };
        all_ok &= r.valid && r.complete;
        let line = Line {
            tape: path.display().to_string(),
            replay: &r,
        };
        writeln!(out, "{}", serde_json::to_string(&line)?).context("writing to stdout")?;
    }
    out.flush().context("writing to stdout")?;
    Ok(all_ok)
}

fn bad(error: String) -> Replay {
    Replay {
        valid: false,
        complete: false,
        failure: Some("invalid-format".into()),
        score: 0,
        level: 1,
        moves: 0,
        covered_rows_consumed: 0,
        failed_at_move: None,
        error: Some(error),
    }
}
