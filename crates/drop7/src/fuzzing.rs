//! The per-target logic of the coverage-guided fuzz targets in `fuzz/`
//! (cargo-fuzz), kept here so that the ordinary test suite replays every
//! corpus file and crash input on stable Rust (`tests/fuzz_replay.rs`).
//!
//! Each function takes the fuzzer's raw bytes and panics only on a real
//! finding: a parser that panics, a value that does not round-trip, or a fast
//! path that disagrees with the plain reference. Arbitrary bytes are decoded
//! with [`Bytes`] (missing bytes read as 0), so every input is valid for
//! every target.
//!
//! Not a stable API.

use crate::board::{Board, CELLS, Cells, SIZE, format_cells, parse_cells};
use crate::cascade::Wave;
use crate::formats::{GameRecord, parse_root_line, parse_seed, seed_hex};
use crate::game::GameState;
use crate::gravity::{Bmi2, Gravity, Portable};
use crate::leaf::FairLeaf;
use crate::player::{FairSpec, TableSpec};
use crate::position::Position;
use crate::reference::engine::RefState;
use crate::reference::search::ReferenceSearch;
use crate::rng::{CountingSource, Mulberry32};
use crate::runner::EngineGame;
use crate::search::{Decision, FairSearch, SearchConfig, worst_case_work};

/// A target's logic: panics on a finding.
pub type Target = fn(&[u8]);

/// Every fuzz target by name, with its function (the names of `fuzz/fuzz_targets/*.rs`
/// and of the corpus directories).
pub const TARGETS: &[(&str, Target)] = &[
    ("board", board_text),
    ("root_line", root_line),
    ("leaf_line", leaf_line),
    ("specs", specs),
    ("record_line", record_line),
    ("input_lines", input_lines),
    ("engine_diff", engine_diff),
    ("leaf_diff", leaf_diff),
    ("search_diff", search_diff),
    ("scripted_round", scripted_round),
    ("tape", tape),
    ("d7p_line", d7p_line),
];

/// Runs the target named `name` on `data`; `false` if there is no such target.
pub fn run(name: &str, data: &[u8]) -> bool {
    match TARGETS.iter().find(|(n, _)| *n == name) {
        Some((_, f)) => {
            f(data);
            true
        }
        None => false,
    }
}

/// A reader of fuzz bytes: each call takes the next byte(s); past the end it
/// reads zeros.
#[derive(Clone, Debug)]
pub struct Bytes<'a> {
    data: &'a [u8],
}

impl<'a> Bytes<'a> {
    /// A reader over `data`.
    pub fn new(data: &'a [u8]) -> Self {
        Bytes { data }
    }

    /// The next byte (0 past the end).
    pub fn u8(&mut self) -> u8 {
        match self.data.split_first() {
            Some((&b, rest)) => {
                self.data = rest;
                b
            }
            None => 0,
        }
    }

    /// The next four bytes, little-endian.
    pub fn u32(&mut self) -> u32 {
        u32::from_le_bytes([self.u8(), self.u8(), self.u8(), self.u8()])
    }

    /// A value in `lo..=hi` from the next byte.
    pub fn range(&mut self, lo: u8, hi: u8) -> u8 {
        lo + self.u8() % (hi - lo + 1)
    }

    /// Whether bytes remain.
    pub fn is_empty(&self) -> bool {
        self.data.is_empty()
    }

    /// An arbitrary bottom-packed board: per column a height 0..=7, then cell
    /// codes 1..=9 (reachable or not).
    pub fn cells(&mut self) -> Cells {
        let mut cells = [0u8; CELLS];
        let heights: [u8; SIZE] = std::array::from_fn(|_| self.u8() % 8);
        for (c, &h) in heights.iter().enumerate() {
            for k in 0..usize::from(h) {
                cells[(SIZE - 1 - k) * SIZE + c] = self.range(1, 9);
            }
        }
        cells
    }
}

/// Board strings: parsing never panics; a parsed board prints back as the
/// input and survives the cells round trip.
pub fn board_text(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let parsed: Result<Board, _> = text.parse();
    let cells = parse_cells(text);
    assert_eq!(parsed.is_ok(), cells.is_ok());
    if let (Ok(board), Ok(cells)) = (parsed, cells) {
        assert_eq!(board.to_string(), text);
        assert_eq!(format_cells(&cells), text);
        assert_eq!(board.to_cells(), cells);
        assert_eq!(Board::from_cells(&cells), board);
        let _ = (board.legal_mask(), board.mirrored(), board.is_empty());
    } else if let Err(e) = text.parse::<Board>() {
        assert!(!e.to_string().is_empty());
    }
}

/// Root lines as `decide` reads them: parsing never panics; an accepted
/// position is in range, and the fast search at depth 1 decides it.
pub fn root_line(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let Ok(pos) = parse_root_line(text) else {
        return;
    };
    assert!((1..=7).contains(&pos.next_disc));
    assert!(pos.game_over || (1..=5).contains(&pos.moves_remaining));
    let mut search = FairSearch::new(
        FairLeaf,
        crate::table::NoTable,
        Portable,
        SearchConfig::new(1, 1),
    );
    let d = search.decide(&pos);
    if pos.game_over {
        assert_eq!(d, Decision::none());
    } else {
        assert_eq!(d.action.is_some(), pos.board.legal_mask() != 0);
    }
}

/// Leaf lines as `leaf` reads them: parsing never panics; the fast leaf of an
/// accepted position equals the plain reference leaf bit for bit.
pub fn leaf_line(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    if let Ok(pos) = parse_root_line(text) {
        check_leaf(&pos);
    }
}

fn check_leaf(pos: &Position) {
    let fast = FairLeaf::value(pos);
    let plain = crate::reference::leaf::fair_leaf(
        &pos.board.to_cells(),
        pos.next_disc,
        pos.moves_remaining,
        pos.game_over,
    );
    assert_eq!(
        fast.to_bits(),
        plain.to_bits(),
        "fast leaf {fast} vs plain leaf {plain} on {pos:?}"
    );
}

/// Seeds, `--table` specs and `fair…` policy specs: parsing never panics and
/// whatever parses prints back to an equal value.
pub fn specs(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    if let Ok(seed) = parse_seed(text) {
        assert_eq!(parse_seed(&seed_hex(seed)), Ok(seed));
        assert_eq!(parse_seed(&seed.to_string()), Ok(seed));
    }
    if let Ok(t) = text.parse::<TableSpec>() {
        assert_eq!(t.to_string().parse::<TableSpec>(), Ok(t));
    }
    if let Ok(f) = text.parse::<FairSpec>() {
        assert_eq!(f.to_string().parse::<FairSpec>().ok(), Some(f));
        assert!(f.config(None).max_work > worst_case_work(f.depth, f.strata));
    }
    if let Ok(g) = text.parse::<crate::gravity::GravityChoice>() {
        let _ = g;
    }
}

/// Parses one record line of `drop7 play --out` as `--resume`, `merge` and
/// `summary` do ([`crate::records::parse_record_line`]).
pub fn parse_record(line: &[u8]) -> Option<GameRecord> {
    let text = std::str::from_utf8(line).ok()?;
    crate::records::parse_record_line(text).ok()
}

/// Record lines as `play --resume` reads them: parsing never panics; a parsed
/// record serialises and parses back to itself.
pub fn record_line(data: &[u8]) {
    if let Some(rec) = parse_record(data) {
        let text = serde_json::to_string(&rec).expect("a record serialises");
        assert_eq!(parse_record(text.as_bytes()).as_ref(), Some(&rec));
    }
}

/// The shared line reader ([`crate::input`]): never panics, never returns a
/// line longer than the limit, and rejoins to the input when every line is
/// accepted (minus BOM and line ends).
pub fn input_lines(data: &[u8]) {
    let mut b = Bytes::new(data);
    let limit = usize::from(b.u8() % 64) + 1;
    let rest = b.data;
    let mut reader = crate::input::LineReader::with_limit(rest, limit);
    let mut n = 0;
    while let Ok(Some(line)) = reader.next_line() {
        n += 1;
        assert_eq!(line.number, n);
        if let Ok(text) = &line.text {
            assert!(text.len() <= limit && text.len() <= line.len);
            assert!(!text.contains('\n'));
        }
    }
}

/// Packed engine against the plain reference engine: an arbitrary
/// bottom-packed board (as given, and cascaded to rest first), next disc,
/// moves to the rise, then up to 16 moves (columns and Mulberry32 reveal
/// streams from the input), on the portable path and on PEXT where the CPU
/// has it: board, waves, score, flags, next disc and draws consumed must be
/// identical after every move.
pub fn engine_diff(data: &[u8]) {
    let mut b = Bytes::new(data);
    let cells = b.cells();
    let next = b.range(1, 7);
    let moves = b.range(1, 5);
    let settle_first = b.u8() & 1 == 1;
    let seed = b.u32();
    let mut columns = Vec::new();
    while !b.is_empty() && columns.len() < 16 {
        columns.push(usize::from(b.u8() % 8));
    }
    if columns.is_empty() {
        columns.push(3);
    }
    let mut start = RefState::new(next);
    start.board = cells;
    start.moves_remaining = moves;
    if settle_first {
        let mut board = Board::from_cells(&cells);
        crate::cascade::resolve(
            Portable,
            &mut board,
            1,
            &mut Mulberry32::new(seed ^ 1),
            &mut (),
        );
        assert!(crate::cascade::is_settled(&board));
        start.board = board.to_cells();
    }
    engine_game(Portable, &start, &columns, seed);
    if let Some(g) = Bmi2::detect() {
        engine_game(g, &start, &columns, seed);
    }
}

fn engine_game<G: Gravity>(g: G, start: &RefState, columns: &[usize], seed: u32) {
    let mut r = *start;
    let mut rr = CountingSource {
        inner: Mulberry32::new(seed),
        draws: 0,
    };
    let pos = Position {
        board: Board::from_cells(&start.board),
        next_disc: start.next_disc,
        moves_remaining: start.moves_remaining,
        game_over: start.game_over,
    };
    let mut p = GameState::from_position(pos, start.score, start.level, start.moves_played);
    let mut pr = CountingSource {
        inner: Mulberry32::new(seed),
        draws: 0,
    };
    for (i, &column) in columns.iter().enumerate() {
        let want = r.play(column, &mut rr);
        let mut waves: Vec<Wave> = Vec::new();
        let got = p.play_with(g, column, &mut pr, &mut waves);
        let at = || format!("{} move {i} column {column}", G::NAME);
        match (want, got) {
            (Err(a), Err(b)) => assert_eq!(a, b, "{}", at()),
            (Ok(a), Ok(b)) => {
                assert_eq!(a.waves, waves, "{}", at());
                assert_eq!(a.score_delta, b.score_delta, "{}", at());
                assert_eq!(a.cleared_board, b.cleared_board, "{}", at());
                assert_eq!(a.level_advanced, b.level_advanced, "{}", at());
                assert_eq!(a.terminal, b.terminal, "{}", at());
            }
            (a, b) => panic!("{}: reference {a:?} vs packed {b:?}", at()),
        }
        assert_eq!(
            format_cells(&r.board),
            p.position.board.to_string(),
            "{}",
            at()
        );
        assert_eq!(
            (r.next_disc, r.moves_remaining, r.game_over),
            (
                p.position.next_disc,
                p.position.moves_remaining,
                p.position.game_over
            ),
            "{}",
            at()
        );
        assert_eq!(
            (r.score, r.level, r.moves_played),
            (p.score, p.level, p.moves_played),
            "{}",
            at()
        );
        assert_eq!(rr.draws, pr.draws, "{}", at());
    }
}

/// Fast leaf against the plain leaf on an arbitrary board, next disc 1..=7,
/// moves to the rise 1..=5 and game-over flag: bit-identical values.
pub fn leaf_diff(data: &[u8]) {
    let mut b = Bytes::new(data);
    let cells = b.cells();
    let pos = Position {
        board: Board::from_cells(&cells),
        next_disc: b.range(1, 7),
        moves_remaining: b.range(1, 5),
        game_over: b.u8().is_multiple_of(16),
    };
    check_leaf(&pos);
    if !pos.game_over {
        let fast = FairLeaf::terms(&pos);
        let plain =
            crate::reference::leaf::fair_leaf_terms(&cells, pos.next_disc, pos.moves_remaining);
        for (k, (a, p)) in fast.iter().zip(plain.iter()).enumerate() {
            assert_eq!(a.to_bits(), p.to_bits(), "term {k}: fast {a} vs plain {p}");
        }
    }
}

/// Fast search against the plain reference search at depth 1..=2, strata
/// 1..=8, on an arbitrary root, with every table kind (none, strict LRU of a
/// small capacity, direct-mapped, 2- and 4-way set-associative), on both
/// gravity paths, sometimes with a binding work budget. With no table or the
/// strict LRU the whole decision (counters included) must equal the
/// reference's; with the hashed tables, whose hits differ, action, completed
/// depth, values and expected scores must equal the reference's (budget
/// non-binding).
pub fn search_diff(data: &[u8]) {
    let mut b = Bytes::new(data);
    let cells = b.cells();
    let pos = Position {
        board: Board::from_cells(&cells),
        next_disc: b.range(1, 7),
        moves_remaining: b.range(1, 5),
        game_over: b.u8().is_multiple_of(32),
    };
    let depth = u32::from(b.range(1, 2));
    let strata = u32::from(b.range(1, 8));
    let mut config = SearchConfig::new(depth, strata);
    let budget = b.u8();
    if budget < 64 {
        // A budget that may stop any iteration (even the first).
        config.max_work = u64::from(b.u32()) % config.max_work.max(1);
    }
    let shift = b.u8();
    let table = match b.u8() % 5 {
        0 => TableSpec::None,
        1 => TableSpec::Lru(usize::from(shift) % 200 + 1),
        2 => TableSpec::DirectMapped(1 << (shift % 12)),
        3 => TableSpec::SetAssociative {
            entries: 2 << (shift % 11),
            ways: 2,
        },
        _ => TableSpec::SetAssociative {
            entries: 4 << (shift % 10),
            ways: 4,
        },
    };
    let capacity = match table {
        TableSpec::None => 0,
        TableSpec::Lru(c) => c,
        // Hashed tables: compare values only, against a table that never evicts.
        _ => 1 << 20,
    };
    let exact = matches!(table, TableSpec::None | TableSpec::Lru(_));
    if !exact && budget < 64 {
        return;
    }
    let want = ReferenceSearch::new(config, capacity).decide(
        &cells,
        pos.next_disc,
        pos.moves_remaining,
        pos.game_over,
    );
    let check = |got: Decision, path: &str| {
        let what = format!(
            "{path} {table} d{depth}s{strata} budget {}",
            config.max_work
        );
        if exact {
            assert_eq!(got.stats, want.stats, "{what}");
        }
        assert_eq!(got.action, want.action, "{what}");
        assert_eq!(got.completed_depth, want.completed_depth, "{what}");
        let bits = |v: [Option<f64>; 7]| v.map(|x| x.map(f64::to_bits));
        assert_eq!(bits(got.values), bits(want.values), "{what}");
        assert_eq!(
            bits(got.expected_scores),
            bits(want.expected_scores),
            "{what}"
        );
    };
    let (portable, bmi2) = crate::with_table!(table, |t| search_both(t, &pos, config))
        .expect("fuzzed tables are small");
    check(portable, "portable");
    if let Some(d) = bmi2 {
        check(d, "bmi2");
    }
}

/// The fast search's decision on both gravity paths (PEXT only where present).
fn search_both<T: crate::table::Table + Clone>(
    t: T,
    pos: &Position,
    config: SearchConfig,
) -> (Decision, Option<Decision>) {
    let portable = FairSearch::new(FairLeaf, t.clone(), Portable, config).decide(pos);
    let bmi2 = Bmi2::detect().map(|g| FairSearch::new(FairLeaf, t, g, config).decide(pos));
    (portable, bmi2)
}

/// Scripted round files (`drop7-scripted-round-v1`) as `drop7 round` reads
/// them: parsing never panics; an accepted round plays to its move cap or
/// game over on the packed engine (a fixed input-driven column rule), the
/// plain reference engine plays it identically, and the game's tape replays
/// valid with the same score, level and moves.
pub fn scripted_round(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let Ok(round) = crate::round::ScriptedRound::parse(text) else {
        return;
    };
    // Keep one input cheap: the discs of an input this size bound the moves anyway.
    let cap = round.maximum_moves.min(400);
    let mut packed = round.start(crate::runner::PackedEngine(Portable));
    let mut plain = round.start(crate::runner::ReferenceEngine);
    let mut m = 0usize;
    while packed.moves_played() < cap {
        let pos = packed.position();
        assert_eq!(pos, plain.position(), "round move {m}");
        let want = (m * 3 + usize::from(pos.next_disc)) % SIZE;
        let Some(column) = (0..SIZE)
            .map(|k| (want + k) % SIZE)
            .find(|&c| pos.board.is_legal(c))
        else {
            break;
        };
        let a = packed.play_move(column, &mut ());
        let b = plain.play_move(column, &mut ());
        assert_eq!(a.is_ok(), b.is_ok(), "round move {m}");
        let Ok(s) = a else { break };
        assert_eq!(
            Some(s.terminal),
            b.ok().map(|t| t.terminal),
            "round move {m}"
        );
        m += 1;
        if s.terminal.is_some() {
            break;
        }
    }
    assert_eq!(
        (packed.score(), packed.level(), packed.moves_played()),
        (plain.score(), plain.level(), plain.moves_played())
    );
    let tape = crate::tape::Tape::of_game(&packed);
    let text = serde_json::to_string(&tape).expect("a tape serialises");
    let r = crate::tape::replay(crate::runner::PackedEngine(Portable), &text);
    assert!(r.failure.as_deref() != Some("invalid-format"), "{r:?}");
    assert_eq!(
        (r.score, r.level, r.moves),
        (packed.score(), packed.level(), packed.moves_played()),
        "{r:?}"
    );
}

/// Tapes (`drop7-recorded-game-v2`) as `drop7 replay` reads them: replaying
/// never panics, names a failure with its words when not valid, and the
/// packed engine (both gravity paths) and the plain reference engine give the
/// same verdict.
pub fn tape(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let fast = crate::tape::replay(crate::runner::PackedEngine(Portable), text);
    if !fast.valid {
        assert!(fast.failure.is_some() && fast.error.is_some(), "{fast:?}");
    }
    let plain = crate::tape::replay(crate::runner::ReferenceEngine, text);
    assert_eq!(fast, plain);
    if let Some(g) = Bmi2::detect() {
        assert_eq!(
            crate::tape::replay(crate::runner::PackedEngine(g), text),
            fast
        );
    }
}

/// D7P lines ([`crate::formats::parse_d7p_command`] as `drop7 d7p` reads
/// them, [`crate::formats::parse_d7p_bestmove`] as a `d7p:` policy reads an
/// engine's answer): never panics; an accepted position prints back as a
/// `position board` command that parses to the same position; an error
/// message is one short line.
pub fn d7p_line(data: &[u8]) {
    use crate::formats::{D7pCommand, parse_d7p_bestmove, parse_d7p_command};
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    match parse_d7p_command(text) {
        Ok(D7pCommand::Position(p)) => {
            assert!(!p.game_over && (1..=7).contains(&p.next_disc));
            let again = format!(
                "position board {} next {} rise {}",
                format_cells(&p.board.to_cells()),
                p.next_disc,
                p.moves_remaining
            );
            assert_eq!(parse_d7p_command(&again), Ok(D7pCommand::Position(p)));
        }
        Ok(_) => {}
        Err(e) => {
            assert!(!e.contains('\n') && e.len() < 400, "{e:?}");
        }
    }
    match parse_d7p_bestmove(text) {
        Ok(_) => {}
        Err(e) => assert!(!e.contains('\n') && e.len() < 400, "{e:?}"),
    }
}
