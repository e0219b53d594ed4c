//! `drop7 trace`: one JSON line per move (the golden files' first block of
//! keys, trace-format.md), games in seed order, on stdout.

use std::io::{self, BufWriter, Write};

use anyhow::{Context, Result};
use clap::Args;
use drop7::runner::{Policy, nth_seed, trace_game};

use super::spec::{GameArgs, with_engine, with_policy};

/// Options of `drop7 trace`.
#[derive(Args, Debug)]
#[command(after_help = "Example:\n  drop7 trace --seed-start 7 --policy random --max-moves 5")]
pub struct TraceArgs {
    #[command(flatten)]
    game: GameArgs,
    /// Number of games (consecutive seeds).
    #[arg(long, default_value_t = 1, value_name = "N")]
    games: u64,
}

/// Runs `drop7 trace`.
pub fn run(args: &TraceArgs) -> Result<()> {
    let setup = args.game.resolve(args.games)?;
    let stdout = io::stdout();
    let mut out = BufWriter::with_capacity(1 << 16, stdout.lock());
    with_engine!(setup.engine, |engine| with_policy!(setup, |make| {
        let mut policy = make();
        trace_all(engine, &mut policy, &setup, &mut out)
    }))??;
    out.flush().context("writing stdout")
}

fn trace_all<E: drop7::runner::Engine, P: Policy>(
    engine: E,
    policy: &mut P,
    setup: &super::spec::GameSetup,
    out: &mut impl Write,
) -> Result<()> {
    let mut failed: Option<io::Error> = None;
    for i in 0..setup.games {
        let seed = nth_seed(setup.seed_start, i);
        trace_game(
            engine,
            policy,
            setup.driver,
            seed,
            setup.max_moves,
            |rec, _| {
                if failed.is_none() {
                    let r = serde_json::to_writer(&mut *out, &rec)
                        .map_err(io::Error::from)
                        .and_then(|()| out.write_all(b"\n"));
                    failed = r.err();
                }
            },
        );
        if let Some(e) = failed.take() {
            return Err(e).context("writing stdout");
        }
    }
    Ok(())
}
