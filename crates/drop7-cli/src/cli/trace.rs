//! `drop7 trace`: one JSON line per move (the golden files' first block of
//! keys, trace-format.md), games in seed order, on stdout.

use std::io::{self, BufWriter, Write};

use anyhow::{Context, Result};
use clap::Args;
use drop7::runner::{Policy, nth_seed, trace_game};

use super::spec::{GameArgs, with_engine, with_policy};

/// Options of `drop7 trace`.
#[derive(Args, Debug)]
#[command(
    after_help = "Examples:\n  drop7 trace --seed-start 7 --policy random --max-moves 5\n  drop7 trace --seed-start 7 --roots | drop7 decide --depth 3   # values before every move"
)]
pub struct TraceArgs {
    #[command(flatten)]
    game: GameArgs,
    /// Number of games (consecutive seeds).
    #[arg(
        long,
        default_value_t = 1,
        value_name = "N",
        allow_negative_numbers = true
    )]
    games: u64,
    /// Print the position before each move instead of the move: one root
    /// line `{"seed","move","board","next","movesRemaining"}` per move (the
    /// input of `drop7 decide` and `drop7 leaf`; `move` is the move about to
    /// be played, 1-based).
    #[arg(long)]
    roots: bool,
}

/// A `--roots` line: the position a policy decided on before move `move`.
#[derive(serde::Serialize)]
#[serde(rename_all = "camelCase")]
struct RootLine {
    seed: u32,
    #[serde(rename = "move")]
    move_number: u32,
    board: String,
    next: u8,
    moves_remaining: u8,
}

/// Runs `drop7 trace`.
pub fn run(args: &TraceArgs) -> Result<()> {
    let setup = args.game.resolve(args.games)?;
    super::d7p::kill_engines_of(&setup.policy)?;
    let stdout = io::stdout();
    let mut out = BufWriter::with_capacity(1 << 16, stdout.lock());
    with_engine!(setup.engine, |engine| with_policy!(setup, |make| {
        let mut policy = make();
        trace_all(engine, &mut policy, &setup, args.roots, &mut out)
    }))??;
    out.flush().context("writing to stdout")?;
    if let super::spec::PolicySpec::D7p(cmd) = &setup.policy {
        super::d7p::check_gave_up(cmd)?;
    }
    Ok(())
}

fn trace_all<E: drop7::runner::Engine, P: Policy>(
    engine: E,
    policy: &mut P,
    setup: &super::spec::GameSetup,
    roots: bool,
    out: &mut impl Write,
) -> Result<()> {
    let mut failed: Option<io::Error> = None;
    for i in 0..setup.games {
        let seed = nth_seed(setup.seed_start, i);
        // With --roots: the board and drops before the rise of the position
        // the next move is played from (the opening position first).
        let opening = drop7::position::Position::initial(1);
        let mut before = (
            drop7::board::format_cells(&opening.board.to_cells()),
            opening.moves_remaining,
        );
        trace_game(
            engine,
            policy,
            setup.driver,
            seed,
            setup.max_moves,
            |rec, _| {
                if failed.is_some() {
                    return;
                }
                let r = if roots {
                    let line = RootLine {
                        seed,
                        move_number: rec.move_number,
                        board: std::mem::replace(&mut before.0, rec.board),
                        next: rec.disc,
                        moves_remaining: std::mem::replace(&mut before.1, rec.moves_remaining),
                    };
                    serde_json::to_writer(&mut *out, &line)
                } else {
                    serde_json::to_writer(&mut *out, &rec)
                };
                failed = r
                    .map_err(io::Error::from)
                    .and_then(|()| out.write_all(b"\n"))
                    .err();
            },
        );
        if let Some(e) = failed.take() {
            return Err(e).context("writing to stdout");
        }
    }
    Ok(())
}

/// `drop7 play --trace FILE`: every move of every game in the trace format
/// (the lines `drop7 trace` prints for the same flags), games in seed order
/// whatever the thread count.
///
/// Workers note each game's columns ([`Noting`]); when the game's record
/// comes up in seed order, the game is replayed from (seed, driver, columns)
/// on the packed engine (portable gravity: identical on every engine) and its
/// lines are written. The trace is flushed to the file before any record
/// that depends on it reaches `--out`, so after a kill at any moment the
/// trace holds at least the games of the records kept; `--resume` checks the
/// kept games' lines against their records (seed, move count,
/// `trajectorySha256`, final score) and against the games replayed from
/// their columns, and drops the lines of games after them.
pub mod file {
    use std::collections::HashMap;
    use std::fs::File;
    use std::io::{self, BufRead, BufReader, BufWriter, Read, Write};
    use std::path::{Path, PathBuf};
    use std::sync::{Arc, Mutex};

    use anyhow::{Context, Result, bail};
    use drop7::board::Board;
    use drop7::formats::{GameRecord, TraceRecord, parse_seed, seed_hex};
    use drop7::game::DriverKind;
    use drop7::gravity::Portable;
    use drop7::position::Position;
    use drop7::records::TrajectoryHash;
    use drop7::runner::{EngineGame, PackedEngine, Policy, nth_seed, trace_game};

    /// Longest trace line read back by `--resume` (a real line is a few kB).
    const MAX_LINE: u64 = 1 << 20;

    /// Each game's columns so far, by seed, shared by the workers.
    #[derive(Clone, Default)]
    pub struct ColumnBook(Arc<Mutex<HashMap<u32, Vec<u8>>>>);

    impl ColumnBook {
        fn with<R>(&self, f: impl FnOnce(&mut HashMap<u32, Vec<u8>>) -> R) -> R {
            f(&mut self.0.lock().unwrap_or_else(|p| p.into_inner()))
        }

        /// The columns of the game with `seed` so far (left in the book).
        pub fn columns(&self, seed: u32) -> Vec<u8> {
            self.with(|m| m.get(&seed).cloned()).unwrap_or_default()
        }

        /// Takes the columns of the game with `seed`.
        pub fn take(&self, seed: u32) -> Vec<u8> {
            self.with(|m| m.remove(&seed)).unwrap_or_default()
        }
    }

    /// A policy wrapper that notes every column it returns in a
    /// [`ColumnBook`] (when given one); otherwise it only forwards.
    pub struct Noting<P: Policy> {
        inner: P,
        book: Option<ColumnBook>,
        seed: u32,
    }

    impl<P: Policy> Noting<P> {
        /// Wraps `inner`.
        pub fn new(inner: P, book: Option<ColumnBook>) -> Self {
            Noting {
                inner,
                book,
                seed: 0,
            }
        }

        fn note(&self, c: Option<usize>) -> Option<usize> {
            if let (Some(c), Some(book)) = (c, &self.book) {
                book.with(|m| m.entry(self.seed).or_default().push(c as u8));
            }
            c
        }
    }

    impl<P: Policy> Policy for Noting<P> {
        fn new_game(&mut self, seed: u32) {
            self.seed = seed;
            if let Some(book) = &self.book {
                book.with(|m| m.insert(seed, Vec::new()));
            }
            self.inner.new_game(seed);
        }
        fn choose(&mut self, pos: &Position) -> Option<usize> {
            let c = self.inner.choose(pos);
            self.note(c)
        }
        fn choose_in<G: EngineGame>(&mut self, game: &G) -> Option<usize> {
            let c = self.inner.choose_in(game);
            self.note(c)
        }
        fn last_search(&self) -> Option<drop7::search::SearchStats> {
            self.inner.last_search()
        }
        fn last_choice_timed(&self) -> bool {
            self.inner.last_choice_timed()
        }
        fn may_time_choices(&self) -> bool {
            self.inner.may_time_choices()
        }
        fn game_tallies(&self) -> Option<(u32, u32)> {
            self.inner.game_tallies()
        }
    }

    /// Plays back a list of columns (then answers `None`).
    struct Columns(std::vec::IntoIter<u8>);

    impl Policy for Columns {
        fn new_game(&mut self, _seed: u32) {}
        fn choose(&mut self, _pos: &Position) -> Option<usize> {
            self.0.next().map(usize::from)
        }
    }

    /// The trace lines of the game of `seed` played with `columns` (on the
    /// packed engine, portable gravity: identical on every engine), as a run
    /// writes them.
    fn replay_columns(
        columns: Vec<u8>,
        driver: DriverKind,
        seed: u32,
        max_moves: u32,
        mut emit: impl FnMut(TraceRecord),
    ) {
        trace_game(
            PackedEngine(Portable),
            &mut Columns(columns.into_iter()),
            driver,
            seed,
            max_moves,
            |line, _| emit(line),
        );
    }

    /// The open, locked `--trace` file.
    pub struct TraceOut {
        path: PathBuf,
        w: BufWriter<File>,
        /// The columns of the games being played.
        pub book: ColumnBook,
        driver: DriverKind,
        max_moves: u32,
        /// A regular file opened without `--resume`: emptied by [`TraceOut::begin`].
        fresh: bool,
    }

    /// What `--resume` checks a trace file against, game by game, while the
    /// records of `--out` are read.
    pub struct TraceCheck {
        path: PathBuf,
        reader: BufReader<File>,
        /// Bytes of the games checked so far.
        pos: u64,
        /// A line read but not yet used (the first line of the next game).
        peeked: Option<(Vec<u8>, u64)>,
        /// The run's driver and move cap: a kept game's lines are compared
        /// with the lines of its columns replayed.
        driver: DriverKind,
        max_moves: u32,
    }

    impl TraceOut {
        /// Opens and locks `path`. Without `resume`: refuses a non-empty file
        /// unless `force`, else empties it when the run starts. With `resume`: returns the check
        /// that [`TraceOut::resume`] finishes.
        pub fn open(
            path: &Path,
            resume: bool,
            force: bool,
            driver: DriverKind,
            max_moves: u32,
            new: &mut crate::cli::play::NewFiles,
        ) -> Result<(TraceOut, Option<TraceCheck>)> {
            let shown = path.display();
            let file = crate::cli::play::open_locked(path, "--trace", new)?;
            let len = file
                .metadata()
                .with_context(|| format!("cannot read --trace {shown}"))?
                .len();
            let regular = file
                .metadata()
                .with_context(|| format!("cannot read --trace {shown}"))?
                .is_file();
            if resume && !regular {
                bail!("--trace {shown} is not a regular file: --resume needs one");
            }
            let check = if resume {
                let reader = BufReader::with_capacity(
                    1 << 16,
                    file.try_clone()
                        .with_context(|| format!("cannot read --trace {shown}"))?,
                );
                Some(TraceCheck {
                    path: path.to_path_buf(),
                    reader,
                    pos: 0,
                    peeked: None,
                    driver,
                    max_moves,
                })
            } else {
                if len > 0 && !force {
                    bail!(
                        "--trace {shown} exists and is not empty: add --resume to continue it (if it holds this run's lines) or --force to overwrite it (nothing was changed)"
                    );
                }
                None
            };
            Ok((
                TraceOut {
                    path: path.to_path_buf(),
                    w: BufWriter::with_capacity(1 << 16, file),
                    book: ColumnBook::default(),
                    driver,
                    max_moves,
                    fresh: !resume && regular,
                },
                check,
            ))
        }

        /// Once `--out` is open: empties a fresh trace file, or finishes the
        /// resume check (see [`TraceOut::resume`]); the file is changed only
        /// when the run starts ([`crate::cli::play::NewFiles::start`]).
        pub fn begin(
            &mut self,
            check: Option<TraceCheck>,
            next_seeds: (u32, u64),
            new: &mut crate::cli::play::NewFiles,
        ) -> Result<()> {
            let len = match check {
                Some(c) => self.resume(c, next_seeds)?,
                // A device or pipe (e.g. /dev/null) is written as it is.
                None if !self.fresh => return Ok(()),
                None => 0,
            };
            new.cut_at_start(self.w.get_ref(), len, "--trace", &self.path)
        }

        /// After [`TraceCheck::game`] accepted every kept record: checks the
        /// rest of the file (lines of the games after them, in seed order
        /// from `next_seed`, or an interrupted line), to be dropped when the
        /// run starts. Refused (nothing changed) if the rest is anything
        /// else. Returns the length the file keeps.
        fn resume(&mut self, mut check: TraceCheck, next_seeds: (u32, u64)) -> Result<u64> {
            let shown = self.path.display();
            let (start, left) = next_seeds;
            let mut index = 0u64;
            while let Some((buf, _)) = check.next_line()? {
                let complete = buf.last() == Some(&b'\n');
                if !complete {
                    // An interrupted line: only the start of a trace line may be dropped.
                    if crate::cli::interrupted_tail(&buf, b"{\"seed\":") {
                        break;
                    }
                    bail!(
                        "--trace {shown} ends with {} that {} not the start of a trace line; not resuming (nothing was changed)",
                        crate::cli::count(buf.len(), "byte"),
                        if buf.len() == 1 { "is" } else { "are" }
                    );
                }
                let line = parse_line(&check.path, &buf)?;
                // Lines of games played after the kept records, in seed order.
                loop {
                    if index >= left {
                        bail!(
                            "--trace {shown} holds a line of game {} after this run's games; not resuming (nothing was changed)",
                            seed_hex(line.seed)
                        );
                    }
                    if line.seed == nth_seed(start, index) {
                        break;
                    }
                    index += 1;
                }
            }
            Ok(check.pos)
        }

        /// Writes the lines of the game of `rec` (its columns from the book).
        pub fn write_game(&mut self, rec: &GameRecord) -> io::Result<()> {
            let Ok(seed) = parse_seed(&rec.seed) else {
                return Ok(());
            };
            let columns = self.book.take(seed);
            let mut failed: Option<io::Error> = None;
            let w = &mut self.w;
            replay_columns(columns, self.driver, seed, self.max_moves, |line| {
                if failed.is_none() {
                    failed = serde_json::to_writer(&mut *w, &line)
                        .map_err(io::Error::from)
                        .and_then(|()| w.write_all(b"\n"))
                        .err();
                }
            });
            match failed {
                Some(e) => Err(e),
                None => Ok(()),
            }
        }

        /// Writes the lines of a scripted round's game (`drop7 play --round`):
        /// the round replayed with its `columns` on the packed engine, one
        /// line per move with `seed` the round's generator seed.
        pub fn write_round(
            &mut self,
            round: &drop7::round::ScriptedRound,
            columns: &[u8],
        ) -> io::Result<()> {
            let mut game = round.start(PackedEngine(Portable));
            for &c in columns {
                let pos = game.position();
                let mut waves = Vec::new();
                let Ok(s) = game.play_move(usize::from(c), &mut waves) else {
                    break;
                };
                let after = game.position();
                let line = TraceRecord {
                    seed: round.generator_seed,
                    move_number: game.moves_played(),
                    disc: pos.next_disc,
                    column: usize::from(c),
                    score_delta: s.score_delta,
                    score: game.score(),
                    level: game.level(),
                    moves_remaining: after.moves_remaining,
                    game_over: after.game_over,
                    cleared_board: s.cleared_board,
                    level_advanced: s.level_advanced,
                    waves,
                    board: drop7::board::format_cells(&after.board.to_cells()),
                };
                serde_json::to_writer(&mut self.w, &line)?;
                self.w.write_all(b"\n")?;
            }
            Ok(())
        }

        /// Pushes the buffered lines to the file.
        pub fn flush(&mut self) -> io::Result<()> {
            self.w.flush()
        }

        /// Flushes and syncs the file.
        pub fn finish(&mut self) -> io::Result<()> {
            self.w.flush()?;
            sync(self.w.get_ref())
        }

        /// The open file and the path it was opened at.
        pub fn file(&self) -> (&File, &Path) {
            (self.w.get_ref(), &self.path)
        }

        /// The file's name as shown in messages.
        pub fn shown(&self) -> String {
            self.path.display().to_string()
        }
    }

    /// `sync_data`, except on a file that cannot be synced (a device such as
    /// /dev/null: EINVAL).
    pub fn sync(file: &File) -> io::Result<()> {
        match file.sync_data() {
            Err(e) if e.kind() == io::ErrorKind::InvalidInput => Ok(()),
            r => r,
        }
    }

    fn parse_line(path: &Path, buf: &[u8]) -> Result<TraceRecord> {
        if buf.trim_ascii().is_empty() {
            anyhow::bail!(
                "--trace {}: a blank line, not a trace line; not resuming (nothing was changed)",
                path.display()
            );
        }
        serde_json::from_slice::<TraceRecord>(buf).map_err(|e| {
            let e = drop7::formats::with_kind_hint(
                e.to_string(),
                &String::from_utf8_lossy(buf),
                "a trace line",
            );
            anyhow::anyhow!(
                "--trace {}: not a trace line ({e}); not resuming (nothing was changed)",
                path.display()
            )
        })
    }

    impl TraceCheck {
        /// The next line (with its newline if it has one), or `None` at the end.
        fn next_line(&mut self) -> Result<Option<(Vec<u8>, u64)>> {
            if let Some(p) = self.peeked.take() {
                return Ok(Some(p));
            }
            let mut buf = Vec::new();
            let n = (&mut self.reader)
                .take(MAX_LINE)
                .read_until(b'\n', &mut buf)
                .with_context(|| {
                    format!("cannot read --trace {} to resume", self.path.display())
                })?;
            if n == 0 {
                return Ok(None);
            }
            if buf.last() != Some(&b'\n') && n as u64 == MAX_LINE {
                bail!(
                    "--trace {}: a line is longer than {MAX_LINE} bytes; not resuming (nothing was changed)",
                    self.path.display()
                );
            }
            Ok(Some((buf, n as u64)))
        }

        /// Checks that the next lines of the trace are the moves of the game
        /// of `rec` (record `line` of `--out`): seed, move numbers 1..=moves,
        /// when the record has one, `trajectorySha256`, then every byte of
        /// the lines against the game replayed from their columns (so no
        /// field of a kept line can have been edited) and the last line's
        /// score against the record's.
        pub fn game(&mut self, rec: &GameRecord, line: u64) -> Result<()> {
            let shown = self.path.display().to_string();
            let seed = parse_seed(&rec.seed).map_err(|e| anyhow::anyhow!("{e}"))?;
            let mut hash = TrajectoryHash::default();
            let mut kept: Vec<Vec<u8>> = Vec::new();
            let mut columns: Vec<u8> = Vec::new();
            for m in 1..=rec.moves {
                let lost = || {
                    anyhow::anyhow!(
                        "--trace {shown} does not hold the moves of game {} (record {line} of --out) from move {m} on: it is not this run's trace (was the run started without --trace?); not resuming (nothing was changed)",
                        rec.seed
                    )
                };
                let Some((buf, n)) = self.next_line()? else {
                    return Err(lost());
                };
                if buf.last() != Some(&b'\n') {
                    return Err(lost());
                }
                let t = parse_line(&self.path, &buf)?;
                if t.seed != seed || t.move_number != m {
                    return Err(lost());
                }
                let board: Board = t.board.parse().map_err(|e| {
                    anyhow::anyhow!(
                        "--trace {shown}: game {} move {m}: {e}; not resuming (nothing was changed)",
                        rec.seed
                    )
                })?;
                hash.push(t.column, &board);
                self.pos += n;
                columns.push(u8::try_from(t.column).unwrap_or(u8::MAX));
                kept.push(buf);
            }
            if let Some(want) = &rec.trajectory_sha256
                && hash.finish() != *want
            {
                bail!(
                    "--trace {shown}: the moves of game {} differ from its record (line {line} of --out: trajectorySha256); not resuming (nothing was changed)",
                    rec.seed
                );
            }
            // Every byte of the kept lines, against the game replayed.
            let mut replayed: Vec<Vec<u8>> = Vec::with_capacity(kept.len());
            let mut score = None;
            replay_columns(columns, self.driver, seed, self.max_moves, |l| {
                score = Some(l.score);
                let mut b = serde_json::to_vec(&l).unwrap_or_default();
                b.push(b'\n');
                replayed.push(b);
            });
            if let Some(m) = (0..kept.len()).find(|&k| replayed.get(k) != Some(&kept[k])) {
                bail!(
                    "--trace {shown}: game {} move {} is not what its columns play (an edited line?); not resuming (nothing was changed)",
                    rec.seed,
                    m + 1
                );
            }
            if let Some(score) = score
                && score != rec.score
            {
                bail!(
                    "--trace {shown}: game {} ends with score {score} but its record (line {line} of --out) has {}; not resuming (nothing was changed)",
                    rec.seed,
                    rec.score
                );
            }
            // A game with more lines than its record's moves is not this run's.
            if let Some((buf, n)) = self.next_line()? {
                if buf.last() == Some(&b'\n')
                    && let Ok(t) = serde_json::from_slice::<TraceRecord>(&buf)
                    && t.seed == seed
                {
                    bail!(
                        "--trace {shown}: game {} has more moves than its record (line {line} of --out); not resuming (nothing was changed)",
                        rec.seed
                    );
                }
                self.peeked = Some((buf, n));
            }
            Ok(())
        }
    }
}
