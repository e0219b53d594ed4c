//! `drop7._drop7`: the native half of the `drop7` Python package (PyO3).
//!
//! Everything here wraps the core library's public API: [`drop7::game::Game`]
//! for single games, [`drop7::search::FairSearch`] for `decide`,
//! [`drop7::leaf::FairLeaf`] for `leaf`, [`drop7::runner::run_seeds_with`] for
//! `play`, and a batch of games stepped in one call for the vector
//! environment. The pure-Python half (`python/drop7/`) adds the Gymnasium
//! environments, the pandas frame and the docs users read
//! (`drop7/__init__.pyi`).
//!
//! Long calls (`decide`, `play`, vector steps) release the GIL. Bad input
//! raises `ValueError` / `TypeError` naming what and where; nothing panics.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use drop7::board::{Board, CELLS, SIZE, format_cells, parse_cells};
use drop7::formats::GameRecord;
use drop7::game::{Driver, DriverKind, Game as CoreGame, GameState, TerminalReason};
use drop7::gravity::{GravityChoice, GravityPath, Portable};
use drop7::leaf::FairLeaf;
use drop7::parallel::{MAX_SEARCH_THREADS, ParallelSearch};
use drop7::player::{FairSpec, TableSpec};
use drop7::position::{DROPS_PER_LEVEL, Position};
use drop7::rng::Mulberry32;
use drop7::runner::{CohortConfig, PackedEngine, RunControl, RunLabels, run_seeds_with};
use drop7::runspec::{FairSettings, PolicyName, record_template, seed_range, stamp_record};
use drop7::search::{Decision, FairSearch};
use numpy::ndarray::{Array1, Array2, Array3};
use numpy::{IntoPyArray, PyArray1, PyArray2, PyArray3, PyReadonlyArray1, PyUntypedArrayMethods};
use pyo3::exceptions::{PyMemoryError, PyRuntimeError, PyTypeError, PyUserWarning, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PyString, PyTuple};

/// Default move cap of `play` and the environments (as `drop7 play`).
const DEFAULT_MAX_MOVES: u32 = 2000;

fn value_error(msg: impl Into<String>) -> PyErr {
    PyValueError::new_err(msg.into())
}

fn parse_driver(name: &str) -> PyResult<DriverKind> {
    driver_kind(name).map_err(value_error)
}

/// The driver named `name`, or the message naming it (for callers that put
/// it in context, e.g. a pickled state's field).
fn driver_kind(name: &str) -> Result<DriverKind, String> {
    match name {
        "headless" => Ok(DriverKind::Headless),
        "stream" => Ok(DriverKind::Stream),
        other => Err(format!(
            "unknown driver {other:?} (expected \"headless\" or \"stream\")"
        )),
    }
}

fn parse_table(spec: &str) -> PyResult<TableSpec> {
    spec.parse::<TableSpec>()
        .map_err(|e| value_error(format!("table: {e}")))
}

/// The gravity path `drop7` would use (`DROP7_GRAVITY`, else auto).
fn gravity_path() -> PyResult<GravityPath> {
    GravityChoice::from_env()
        .and_then(GravityChoice::resolve)
        .map_err(|e| value_error(format!("DROP7_GRAVITY: {e}")))
}

/// A seed from any Python integer: 0..=2^32-1, else ValueError.
fn seed_from(obj: &Bound<'_, PyAny>, what: &str) -> PyResult<u32> {
    int_arg(obj, what, 0, u32::MAX.into())
        .map(|v| v as u32)
        .map_err(|e| {
            if e.is_instance_of::<PyValueError>(obj.py()) && !is_masked(obj) {
                value_error(format!(
                    "{what} must be in 0..=4294967295, got {}",
                    obj.str().map(|s| s.to_string()).unwrap_or_default()
                ))
            } else {
                e
            }
        })
}

/// An integer argument in `lo..=hi`: TypeError for a non-integer (or a
/// bool), ValueError naming the argument and the range otherwise (never
/// OverflowError, however large or negative the integer).
fn int_arg(obj: &Bound<'_, PyAny>, what: &str, lo: i128, hi: i128) -> PyResult<i128> {
    if obj.is_instance_of::<pyo3::types::PyBool>() {
        return Err(PyTypeError::new_err(format!(
            "{what} must be an integer, got bool"
        )));
    }
    // A masked NumPy entry has no value (`__index__` would give the one
    // hidden under the mask).
    if is_masked(obj) {
        return Err(value_error(format!(
            "{what} is masked: a masked NumPy value has no value to use"
        )));
    }
    let Ok(index) = obj.call_method0("__index__") else {
        return Err(PyTypeError::new_err(format!(
            "{what} must be an integer, got {}",
            type_name(obj)
        )));
    };
    match index.extract::<i128>() {
        Ok(v) if (lo..=hi).contains(&v) => Ok(v),
        _ => Err(value_error(format!(
            "{what} must be {lo}-{hi}, got {}",
            index.str().map(|s| s.to_string()).unwrap_or_default()
        ))),
    }
}

/// Whether `obj` is a masked NumPy value or array with a masked entry (not
/// a plain int, which is never asked).
fn is_masked(obj: &Bound<'_, PyAny>) -> bool {
    !obj.is_instance_of::<pyo3::types::PyInt>()
        && obj.hasattr("mask").unwrap_or(false)
        && obj
            .py()
            .import("numpy")
            .and_then(|np| np.getattr("ma")?.call_method1("is_masked", (obj,)))
            .and_then(|m| m.is_truthy())
            .unwrap_or(false)
}

fn int_in(obj: &Bound<'_, PyAny>, what: &str, lo: i64, hi: i64) -> PyResult<i64> {
    int_arg(obj, what, lo.into(), hi.into()).map(|v| v as i64)
}

/// An integer argument with a default (for `None` or when left out).
fn int_or(
    obj: Option<&Bound<'_, PyAny>>,
    what: &str,
    lo: i128,
    hi: i128,
    default: i128,
) -> PyResult<i128> {
    match obj {
        Some(o) if !o.is_none() => int_arg(o, what, lo, hi),
        _ => Ok(default),
    }
}

/// The `max_moves` argument: 1..=2^32-1, default [`DEFAULT_MAX_MOVES`].
fn max_moves_arg(obj: Option<&Bound<'_, PyAny>>) -> PyResult<u32> {
    int_or(
        obj,
        "max_moves",
        1,
        u32::MAX.into(),
        DEFAULT_MAX_MOVES.into(),
    )
    .map(|v| v as u32)
}

/// An optional `u64` argument (`None` passes through).
fn opt_u64(obj: Option<&Bound<'_, PyAny>>, what: &str) -> PyResult<Option<u64>> {
    match obj {
        Some(o) if !o.is_none() => Ok(Some(int_arg(o, what, 0, u64::MAX.into())? as u64)),
        _ => Ok(None),
    }
}

/// Largest `score` `Game.from_board` accepts (2^53, the largest integer a
/// float64 holds exactly): a move scores less than 2^30 points, so no game
/// started below it reaches `u64::MAX` within the 2^32 moves it may count.
const MAX_START_SCORE: u64 = 1 << 53;

/// Largest score a game may have before `Game.step` plays a move (a move
/// scores less than 2^30 points, so the sum never wraps).
const MAX_SCORE_BEFORE_MOVE: u64 = u64::MAX - (1 << 30);

/// Why a game with these counters cannot move on (one would wrap), or
/// `None` when it can: moves_played or level at `u32::MAX`, a score above
/// [`MAX_SCORE_BEFORE_MOVE`] (only a restored game reaches these).
fn counters_at_limit(st: &drop7::GameState) -> Option<String> {
    (st.moves_played == u32::MAX || st.level == u32::MAX || st.score > MAX_SCORE_BEFORE_MOVE)
        .then(|| {
            format!(
                "the game's counters are at their limit (moves_played {}, level {}; at most {}; score {}, at most {})",
                st.moves_played,
                st.level,
                u32::MAX,
                st.score,
                MAX_SCORE_BEFORE_MOVE
            )
        })
}

/// Largest `level` and `moves_played` `Game.from_board` accepts (2^31): a
/// game then has 2^31 - 1 moves (each at most one rise) before a counter
/// (`u32`) could run out, and `Game.step` refuses a move once one is at
/// `u32::MAX` rather than wrap.
const MAX_START_COUNT: u32 = 1 << 31;

/// Most threads of one `play` call: the CLI's limit.
const MAX_THREADS: usize = drop7::runner::MAX_THREADS;

/// Most environments of one `Drop7VectorEnv` (2^20; about 200 bytes each).
const MAX_NUM_ENVS: usize = 1 << 20;

fn type_name(obj: &Bound<'_, PyAny>) -> String {
    obj.get_type()
        .name()
        .map(|n| n.to_string())
        .unwrap_or_else(|_| "?".into())
}

/// A board from a 49-character string or a `(7, 7)` integer array-like
/// (row 0 at the top; 0 empty, 1-7 numbered discs, 8 solid gray, 9 cracked gray).
fn board_from(py: Python<'_>, obj: &Bound<'_, PyAny>) -> PyResult<Board> {
    if let Ok(s) = obj.cast::<PyString>() {
        let text = s.to_cow()?;
        return parse_cells(&text)
            .map(|c| Board::from_cells(&c))
            .map_err(|e| value_error(e.to_string()));
    }
    let np = py.import("numpy")?;
    // asarray would read a masked cell's hidden value (of a masked array,
    // or of masked rows in a list: np.ma.asarray keeps their masks).
    let ma = np.getattr("ma")?;
    // (A plain ndarray has no mask: not converted, the common case stays fast.)
    if !obj.get_type().is(&np.getattr("ndarray")?)
        && ma
            .call_method1("asarray", (obj,))
            .and_then(|m| ma.call_method1("is_masked", (m,)))
            .is_ok_and(|m| m.is_truthy().unwrap_or(false))
    {
        return Err(value_error(
            "board is a masked array with masked cells: every cell needs a value",
        ));
    }
    let arr = np.call_method1("asarray", (obj,)).map_err(|e| {
        PyTypeError::new_err(format!(
            "board must be a (7, 7) integer array or a 49-character string, got {} ({e})",
            type_name(obj)
        ))
    })?;
    // A scalar (None, a number) is no board at all, whatever its dtype.
    let ndim: usize = arr.getattr("ndim")?.extract()?;
    if ndim == 0 {
        return Err(PyTypeError::new_err(format!(
            "board must be a (7, 7) integer array or a 49-character string, got {}",
            type_name(obj)
        )));
    }
    let kind: String = arr.getattr("dtype")?.getattr("kind")?.extract()?;
    if kind != "i" && kind != "u" {
        let dtype = arr.getattr("dtype")?.str()?.to_string();
        // A list holding an int past 64 bits (or a non-number) becomes an
        // object array: say so, rather than only naming the dtype.
        let hint = if kind == "O" {
            " (every cell must be a cell code 0-9: a list holding a larger int or a non-number makes an object array)"
        } else {
            ""
        };
        return Err(PyTypeError::new_err(format!(
            "board must have an integer dtype (e.g. int8), got {dtype}{hint}"
        )));
    }
    let shape: Vec<usize> = arr.getattr("shape")?.extract()?;
    if shape != [SIZE, SIZE] {
        return Err(value_error(format!(
            "board must have shape (7, 7), got {}",
            shape_text(&shape)
        )));
    }
    // Python ints as they are (not cast to int64 first: a uint64 cell of
    // 2**64 - 1 is named as that, not as -1).
    let values: Vec<i128> = arr
        .call_method0("ravel")?
        .call_method0("tolist")?
        .extract()?;
    let mut text = String::with_capacity(CELLS);
    for (i, &v) in values.iter().enumerate() {
        if !(0..=9).contains(&v) {
            return Err(value_error(format!(
                "board[{}, {}] is {v}, expected a cell code 0-9",
                i / SIZE,
                i % SIZE
            )));
        }
        text.push(char::from(b'0' + v as u8));
    }
    parse_cells(&text)
        .map(|c| Board::from_cells(&c))
        .map_err(|e| value_error(e.to_string()))
}

fn shape_text(shape: &[usize]) -> String {
    match shape {
        [n] => format!("({n},)"),
        _ => format!(
            "({})",
            shape
                .iter()
                .map(|d| d.to_string())
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}

fn board_array(board: &Board) -> Array2<i8> {
    let cells = board.to_cells();
    Array2::from_shape_fn((SIZE, SIZE), |(r, c)| cells[r * SIZE + c] as i8)
}

fn mask_of(board: &Board, over: bool) -> [bool; 7] {
    let m = if over { 0 } else { board.legal_mask() };
    std::array::from_fn(|c| m & (1 << c) != 0)
}

/// A position from a `Game` or a mapping `{"board", "next", "movesRemaining"[, "gameOver"]}`
/// (the root-line keys of `drop7 decide`; `next_disc` / `moves_remaining` /
/// `game_over` are accepted too). With `"gameOver": true`, `next` may be left
/// out and `movesRemaining` may be 0, as in `drop7 decide`/`leaf`.
fn position_from(py: Python<'_>, obj: &Bound<'_, PyAny>) -> PyResult<Position> {
    if let Ok(g) = obj.cast::<Game>() {
        return Ok(g.borrow().inner.state().position);
    }
    let Ok(map) = obj.cast::<pyo3::types::PyMapping>() else {
        return Err(PyTypeError::new_err(format!(
            "position must be a drop7.Game or a mapping with keys \"board\", \"next\", \"movesRemaining\", got {}",
            type_name(obj)
        )));
    };
    // One key under one of its spellings: both ("next" and "next_disc")
    // could disagree, so two are refused.
    let get = |keys: &[&str]| -> PyResult<Option<Bound<'_, PyAny>>> {
        let mut found: Option<&str> = None;
        for k in keys {
            if map.contains(*k)? {
                if let Some(first) = found {
                    return Err(value_error(format!(
                        "position: both {first:?} and {k:?} are given (one key, two spellings)"
                    )));
                }
                found = Some(k);
            }
        }
        found.map(|k| map.get_item(k)).transpose()
    };
    let need = |keys: &[&str]| -> PyResult<Bound<'_, PyAny>> {
        get(keys)?.ok_or_else(|| value_error(format!("position: missing key {:?}", keys[0])))
    };
    let board = board_from(py, &need(&["board"])?)?;
    let game_over = match get(&["gameOver", "game_over"])? {
        None => false,
        Some(v) if v.is_none() => false,
        Some(v) => v
            .extract::<bool>()
            .map_err(|_| PyTypeError::new_err("gameOver must be a bool"))?,
    };
    // As `drop7 decide`/`leaf` read a root line: a game-over position (a
    // `drop7 trace` line after a blocked rise) may omit `next` (it is then 1,
    // never used) and may have `movesRemaining` 0.
    let next = match get(&["next", "next_disc"])? {
        None if game_over => 1,
        // (`Game.position()` of a finished game: `"next": None`.)
        Some(v) if game_over && v.is_none() => 1,
        _ => int_in(&need(&["next", "next_disc"])?, "next", 1, 7)?,
    };
    let rise = int_in(
        &need(&["movesRemaining", "moves_remaining"])?,
        "movesRemaining",
        i64::from(!game_over),
        5,
    )?;
    Ok(Position {
        board,
        next_disc: next as u8,
        moves_remaining: rise as u8,
        game_over,
    })
}

/// The memory this process may use, in bytes: the machine's (`os.sysconf`,
/// Linux and macOS), or its cgroup's limit if lower (a container's
/// `memory.max`, cgroup v2); `None` if the platform does not tell.
fn physical_memory(py: Python<'_>) -> Option<u128> {
    let os = py.import("os").ok()?;
    let get = |name: &str| -> Option<u128> {
        let v: i64 = os.call_method1("sysconf", (name,)).ok()?.extract().ok()?;
        u128::try_from(v).ok().filter(|&v| v > 0)
    };
    let machine = get("SC_PHYS_PAGES")? * get("SC_PAGE_SIZE")?;
    let cgroup = std::fs::read_to_string("/sys/fs/cgroup/memory.max")
        .ok()
        .and_then(|t| t.trim().parse::<u128>().ok());
    Some(cgroup.map_or(machine, |c| c.min(machine)))
}

/// One game of Drop7 Hardcore on the exact engine.
///
/// `Game(seed, driver="headless")`: the reference game of `seed`
/// (0..2**32-1); `driver` is "headless" (per-move seeds, the research
/// driver) or "stream" (one Mulberry32 stream). `Game.from_board(...)`
/// starts from any position.
///
/// Board encoding: `board` is a numpy int8 array of shape (7, 7), row 0 at
/// the top; cell codes 0 empty, 1-7 numbered discs, 8 solid gray, 9 cracked
/// gray. `action_mask` is a numpy bool array of shape (7,).
///
/// A game can be pickled (any protocol 2 or later) and copied
/// (`copy.copy`, `copy.deepcopy`, `game.copy()`): the copy has the same
/// state, seed, driver and terminal reason and the same randomness to come
/// (the same columns give the same outcomes). The pickle holds plain Python
/// ints, str and None (state format version 1) and is read back by
/// `drop7._drop7._restore_game`; a malformed state raises ValueError or
/// TypeError naming the field.
///
/// Raises ValueError for a seed out of range or an unknown driver,
/// TypeError for a non-integer seed. Types: `drop7/__init__.pyi`.
#[pyclass(module = "drop7", name = "Game")]
#[derive(Clone)]
struct Game {
    inner: CoreGame<Portable>,
    kind: DriverKind,
    terminal: Option<TerminalReason>,
}

impl Game {
    /// The next disc as a user sees it: none once the game is over (the
    /// engine keeps the disc just dropped there).
    fn shown_next(&self) -> Option<u8> {
        let p = self.inner.state().position;
        (!p.game_over).then_some(p.next_disc)
    }

    fn outcome<'py>(
        &self,
        py: Python<'py>,
        out: &drop7::game::MoveOutcome,
    ) -> PyResult<Bound<'py, PyDict>> {
        let d = PyDict::new(py);
        d.set_item("disc", out.disc)?;
        d.set_item("column", out.column)?;
        d.set_item("score_delta", out.score_delta)?;
        let waves = PyList::empty(py);
        let mut reveals = 0u32;
        for w in &out.waves {
            let wd = PyDict::new(py);
            wd.set_item("depth", w.depth)?;
            wd.set_item("cleared", w.cleared)?;
            wd.set_item("revealed", w.revealed)?;
            wd.set_item("points", w.points)?;
            waves.append(wd)?;
            reveals += w.revealed;
        }
        d.set_item("waves", waves)?;
        d.set_item("reveals", reveals)?;
        d.set_item("cleared_board", out.cleared_board)?;
        d.set_item("level_advanced", out.level_advanced)?;
        d.set_item("game_over", out.terminal.is_some())?;
        d.set_item("terminal_reason", out.terminal.map(TerminalReason::as_str))?;
        let st = self.inner.state();
        d.set_item("score", st.score)?;
        d.set_item("level", st.level)?;
        d.set_item("moves_remaining", st.position.moves_remaining)?;
        d.set_item("next_disc", self.shown_next())?;
        Ok(d)
    }
}

/// Version of the state tuple a pickled `Game` carries (see
/// [`Game::state_tuple`]); `_restore_game` reads this version only.
const STATE_VERSION: u32 = 1;

/// Fields of a version-1 state tuple, in order (for error messages).
const STATE_FIELDS: [&str; 11] = [
    "version",
    "board",
    "next_disc",
    "moves_remaining",
    "score",
    "level",
    "moves_played",
    "seed",
    "driver",
    "terminal_reason",
    "stream_state",
];

/// A version-1 state tuple, as [`Game::state_tuple`] makes it.
type StateTuple = (
    u32,
    String,
    u8,
    u8,
    u64,
    u32,
    u32,
    u32,
    &'static str,
    Option<&'static str>,
    Option<u32>,
);

impl Game {
    /// The whole game as plain Python values (format [`STATE_VERSION`]):
    /// `(version, board (49-digit str, row 0 first), next_disc,
    /// moves_remaining, score, level, moves_played, seed, driver ("headless"
    /// or "stream"), terminal_reason (str or None), stream_state (the stream
    /// driver's Mulberry32 state, None for the headless driver))`. Whether
    /// the game is over is `terminal_reason is not None`.
    fn state_tuple(&self) -> StateTuple {
        let st = self.inner.state();
        let stream_state = match self.inner.driver() {
            Driver::Headless { .. } => None,
            Driver::Stream { rng, .. } => Some(rng.state()),
        };
        (
            STATE_VERSION,
            format_cells(&st.position.board.to_cells()),
            st.position.next_disc,
            st.position.moves_remaining,
            st.score,
            st.level,
            st.moves_played,
            self.inner.driver().seed(),
            self.kind.as_str(),
            self.terminal.map(TerminalReason::as_str),
            stream_state,
        )
    }

    /// The game a state tuple describes (the inverse of
    /// [`Game::state_tuple`]). Raises TypeError for a value of the wrong
    /// type, ValueError for a wrong length, an unsupported version, a value
    /// out of range or parts that no game can reach together, each naming
    /// the field.
    fn from_state_tuple(state: &Bound<'_, PyAny>) -> PyResult<Game> {
        let Ok(t) = state.cast::<PyTuple>() else {
            return Err(PyTypeError::new_err(format!(
                "Game state must be a tuple, got {}",
                type_name(state)
            )));
        };
        if t.is_empty() {
            return Err(value_error(
                "Game state is an empty tuple (expected a format version first)",
            ));
        }
        let field = |i: usize| -> PyResult<Bound<'_, PyAny>> { t.get_item(i) };
        let what = |i: usize| format!("Game state field {i} ({})", STATE_FIELDS[i]);
        let version = int_arg(&field(0)?, &what(0), 0, u32::MAX.into())?;
        if version != i128::from(STATE_VERSION) {
            return Err(value_error(format!(
                "Game state format version {version} is not supported (this drop7 reads version {STATE_VERSION})"
            )));
        }
        if t.len() != STATE_FIELDS.len() {
            return Err(value_error(format!(
                "Game state (version {STATE_VERSION}) must have {} items, got {}",
                STATE_FIELDS.len(),
                t.len()
            )));
        }
        let str_field = |i: usize| -> PyResult<String> {
            let v = field(i)?;
            match v.cast::<PyString>() {
                Ok(s) => Ok(s.to_cow()?.into_owned()),
                Err(_) => Err(PyTypeError::new_err(format!(
                    "{} must be a str, got {}",
                    what(i),
                    type_name(&v)
                ))),
            }
        };
        let board = parse_cells(&str_field(1)?)
            .map(|c| Board::from_cells(&c))
            .map_err(|e| value_error(format!("{}: {e}", what(1))))?;
        let next = int_in(&field(2)?, &what(2), 1, 7)? as u8;
        let rise = int_in(&field(3)?, &what(3), 0, DROPS_PER_LEVEL.into())? as u8;
        let score = int_arg(&field(4)?, &what(4), 0, u64::MAX.into())? as u64;
        let level = int_arg(&field(5)?, &what(5), 1, u32::MAX.into())? as u32;
        let moves_played = int_arg(&field(6)?, &what(6), 0, u32::MAX.into())? as u32;
        let seed = int_arg(&field(7)?, &what(7), 0, u32::MAX.into())? as u32;
        let kind =
            driver_kind(&str_field(8)?).map_err(|e| value_error(format!("{}: {e}", what(8))))?;
        let terminal = if field(9)?.is_none() {
            None
        } else {
            match str_field(9)?.as_str() {
                "blocked-rise" => Some(TerminalReason::BlockedRise),
                "no-legal-column" => Some(TerminalReason::NoLegalColumn),
                other => {
                    return Err(value_error(format!(
                        "{}: unknown terminal reason {other:?} (expected \"blocked-rise\", \"no-legal-column\" or None)",
                        what(9)
                    )));
                }
            }
        };
        let stream = field(10)?;
        let driver = match kind {
            DriverKind::Headless if stream.is_none() => Driver::headless(seed),
            DriverKind::Headless => {
                return Err(value_error(format!(
                    "{} must be None for the headless driver, got {}",
                    what(10),
                    stream.str().map(|s| s.to_string()).unwrap_or_default()
                )));
            }
            DriverKind::Stream if stream.is_none() => {
                return Err(value_error(format!(
                    "{} must be an integer 0-{} for the stream driver, got None",
                    what(10),
                    u32::MAX
                )));
            }
            DriverKind::Stream => Driver::Stream {
                seed,
                rng: Mulberry32::from_state(int_arg(&stream, &what(10), 0, u32::MAX.into())? as u32),
            },
        };
        // Only parts a game can reach together: playing on from anything
        // else could misbehave (e.g. a game going on with no drop left).
        let full = board.legal_mask() == 0;
        let inconsistent = match terminal {
            None if rise == 0 => Some("a game not over must have moves_remaining 1-5, got 0"),
            None if full => Some("a game not over must have a legal column, but the board is full"),
            Some(TerminalReason::BlockedRise) if rise != 0 => {
                Some("a game ended by a blocked rise must have moves_remaining 0")
            }
            // The rise is blocked by a disc in the top row, which stays.
            Some(TerminalReason::BlockedRise) if board.legal_mask() == 0x7f => {
                Some("a game ended by a blocked rise must have a disc in its top row")
            }
            Some(TerminalReason::NoLegalColumn) if !full => {
                Some("a game ended with no legal column must have a full board")
            }
            Some(TerminalReason::NoLegalColumn) if rise == 0 => {
                Some("a game ended with no legal column must have moves_remaining 1-5, got 0")
            }
            _ => None,
        };
        if let Some(msg) = inconsistent {
            return Err(value_error(format!("Game state: {msg}")));
        }
        let position = Position {
            board,
            next_disc: next,
            moves_remaining: rise,
            game_over: terminal.is_some(),
        };
        let state = GameState::from_position(position, score, level, moves_played);
        Ok(Game {
            inner: CoreGame::from_state(state, driver, Portable),
            kind,
            terminal,
        })
    }
}

#[pymethods]
impl Game {
    #[new]
    #[pyo3(signature = (seed, driver = "headless"))]
    fn new(seed: &Bound<'_, PyAny>, driver: &str) -> PyResult<Game> {
        let seed = seed_from(seed, "seed")?;
        let kind = parse_driver(driver)?;
        Ok(Game {
            inner: CoreGame::new(kind.driver(seed)),
            kind,
            terminal: None,
        })
    }

    /// A game at a given position.
    ///
    /// `board`: an integer array-like of shape (7, 7) (any integer dtype,
    /// e.g. numpy int8; row 0 at the top, cell codes 0-9) or a 49-character
    /// string, row 0 first. `next_disc` 1-7; `moves_remaining` 1-5 (default
    /// 5); `score` 0..2**53, `level` 1..2**31, `moves_played` 0..2**31 (so
    /// that playing on can never overflow a counter); `seed` 0..2**32-1
    /// (default None, which means seed 0). With the headless driver the next move's reveals and next
    /// disc come from (seed, moves_played), as in the game that reached it; the stream driver starts
    /// the seed's stream afresh (copy or pickle a Game to continue a stream game exactly).
    /// A board with no legal column gives a game already over.
    ///
    /// Raises TypeError for a non-integer board dtype or argument,
    /// ValueError (naming the argument and its range) for a wrong shape, a
    /// cell outside 0-9, a floating disc or a value out of range.
    #[staticmethod]
    #[pyo3(
        signature = (board, next_disc, moves_remaining = None, *, score = None, level = None, moves_played = None, seed = None, driver = "headless"),
        text_signature = "(board, next_disc, moves_remaining=None, *, score=0, level=1, moves_played=0, seed=None, driver='headless')"
    )]
    #[allow(clippy::too_many_arguments)]
    fn from_board(
        py: Python<'_>,
        board: &Bound<'_, PyAny>,
        next_disc: &Bound<'_, PyAny>,
        moves_remaining: Option<&Bound<'_, PyAny>>,
        score: Option<&Bound<'_, PyAny>>,
        level: Option<&Bound<'_, PyAny>>,
        moves_played: Option<&Bound<'_, PyAny>>,
        seed: Option<&Bound<'_, PyAny>>,
        driver: &str,
    ) -> PyResult<Game> {
        let board = board_from(py, board)?;
        let next = int_in(next_disc, "next_disc", 1, 7)? as u8;
        let rise = match moves_remaining {
            Some(r) => int_in(r, "moves_remaining", 1, 5)? as u8,
            None => DROPS_PER_LEVEL,
        };
        let score = int_or(score, "score", 0, MAX_START_SCORE.into(), 0)? as u64;
        let level = int_or(level, "level", 1, MAX_START_COUNT.into(), 1)? as u32;
        let moves_played =
            int_or(moves_played, "moves_played", 0, MAX_START_COUNT.into(), 0)? as u32;
        let seed = match seed {
            Some(s) => seed_from(s, "seed")?,
            None => 0,
        };
        let kind = parse_driver(driver)?;
        let over = board.legal_mask() == 0;
        let position = Position {
            board,
            next_disc: next,
            moves_remaining: rise,
            game_over: over,
        };
        let state = GameState::from_position(position, score, level, moves_played);
        Ok(Game {
            inner: CoreGame::from_state(state, kind.driver(seed), Portable),
            kind,
            terminal: over.then_some(TerminalReason::NoLegalColumn),
        })
    }

    /// Drops the next disc into `column` (0-6) and returns the move's
    /// outcome as a dict: `disc`, `column`, `score_delta` (int, points),
    /// `waves` (list of {`depth`, `cleared`, `revealed`, `points`}),
    /// `reveals`, `cleared_board`, `level_advanced`, `game_over`,
    /// `terminal_reason` ("blocked-rise", "no-legal-column" or None), then
    /// the state after the move: `score`, `level`, `moves_remaining`,
    /// `next_disc` (None once the game is over).
    ///
    /// Raises ValueError for a column out of range, a full column or a game
    /// already over (the game is then unchanged), TypeError for a
    /// non-integer.
    fn step<'py>(
        &mut self,
        py: Python<'py>,
        column: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyDict>> {
        let c = int_arg(column, "column", i64::MIN.into(), i64::MAX.into()).map_err(|e| {
            if e.is_instance_of::<PyValueError>(py) && !is_masked(column) {
                value_error(format!(
                    "column {} is out of range 0-6",
                    column.str().map(|s| s.to_string()).unwrap_or_default()
                ))
            } else {
                e
            }
        })? as i64;
        if self.inner.is_over() {
            return Err(value_error(format!(
                "the game is over ({}); start a new game",
                self.terminal.map_or("game over", TerminalReason::as_str)
            )));
        }
        if !(0..7).contains(&c) {
            return Err(value_error(format!("column {c} is out of range 0-6")));
        }
        // Never reached from a `from_board` start within 2^31 moves: the
        // counters refuse to wrap rather than count on from 0.
        // A restored (unpickled) game may carry any u64 score: a move scores
        // less than 2^30 points, so one above `u64::MAX - 2^30` refuses too.
        if let Some(limit) = counters_at_limit(self.inner.state()) {
            return Err(value_error(format!("{limit}; start a new game")));
        }
        let out = self.inner.play(c as usize).map_err(|e| {
            value_error(format!(
                "illegal move: {e} (legal columns: {:?})",
                self.legal_columns()
            ))
        })?;
        self.terminal = out.terminal;
        self.outcome(py, &out)
    }

    /// list[int]: the columns that are not full, ascending; [] once the game is over.
    #[getter]
    fn legal_columns(&self) -> Vec<usize> {
        let m = mask_of(self.inner.board(), self.inner.is_over());
        (0..7).filter(|&c| m[c]).collect()
    }

    /// numpy bool array of shape (7,): True for a legal column (all False
    /// once the game is over). A new array each time.
    #[getter]
    fn action_mask<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray1<bool>> {
        Array1::from(mask_of(self.inner.board(), self.inner.is_over()).to_vec()).into_pyarray(py)
    }

    /// numpy int8 array of shape (7, 7), row 0 at the top: 0 empty, 1-7
    /// numbered discs, 8 solid gray, 9 cracked gray. A new array each time.
    #[getter]
    fn board<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray2<i8>> {
        board_array(self.inner.board()).into_pyarray(py)
    }

    /// str: the board as 49 digits 0-9, row 0 (the top) first, as in traces.
    #[getter]
    fn board_string(&self) -> String {
        format_cells(&self.inner.board().to_cells())
    }

    /// int or None: the disc the next move drops, 1-7; None once the game
    /// is over (no next disc is drawn then; as `step()`'s `next_disc`).
    #[getter]
    fn next_disc(&self) -> Option<u8> {
        self.shown_next()
    }

    /// int: drops left before the next rise, 1-5 (0 after a blocked rise).
    #[getter]
    fn moves_remaining(&self) -> u8 {
        self.inner.state().position.moves_remaining
    }

    /// int: 1 + the rises so far (from `from_board`: its `level` + rises since).
    #[getter]
    fn level(&self) -> u32 {
        self.inner.state().level
    }

    /// int: points scored so far.
    #[getter]
    fn score(&self) -> u64 {
        self.inner.state().score
    }

    /// int: moves played so far.
    #[getter]
    fn moves_played(&self) -> u32 {
        self.inner.state().moves_played
    }

    /// bool: the game has ended (a blocked rise, or no legal column).
    #[getter]
    fn game_over(&self) -> bool {
        self.inner.is_over()
    }

    /// str or None: "blocked-rise" or "no-legal-column" once the game is
    /// over, else None.
    #[getter]
    fn terminal_reason(&self) -> Option<&'static str> {
        self.terminal.map(TerminalReason::as_str)
    }

    /// int: the game seed, 0..2**32-1.
    #[getter]
    fn seed(&self) -> u32 {
        self.inner.driver().seed()
    }

    /// str: the driver, "headless" or "stream".
    #[getter]
    fn driver(&self) -> &'static str {
        self.kind.as_str()
    }

    /// The public position as a `drop7 decide` root line: a dict
    /// {"board": str (49 digits, row 0 first), "next": int 1-7 (None once
    /// the game is over), "movesRemaining": int 0-5, "gameOver": bool},
    /// accepted by `decide` and `leaf`.
    fn position<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let d = PyDict::new(py);
        let p = self.inner.state().position;
        d.set_item("board", format_cells(&p.board.to_cells()))?;
        d.set_item("next", self.shown_next())?;
        d.set_item("movesRemaining", p.moves_remaining)?;
        d.set_item("gameOver", p.game_over)?;
        Ok(d)
    }

    /// An independent copy of the game (same state, same randomness to come).
    fn copy(&self) -> Game {
        self.clone()
    }

    /// `copy.copy(game)`: the same as `game.copy()`.
    fn __copy__(&self) -> Game {
        self.clone()
    }

    /// `copy.deepcopy(game)`: the same as `game.copy()`.
    fn __deepcopy__(&self, _memo: &Bound<'_, PyAny>) -> Game {
        self.clone()
    }

    /// `pickle.dumps(game)`: `(drop7._drop7._restore_game, (state,))`,
    /// `state` a tuple of plain Python values (format version 1: ints, str
    /// and None; see `_restore_game`). Unpickling gives a game equal to this
    /// one, with the same randomness to come.
    fn __reduce__<'py>(&self, py: Python<'py>) -> PyResult<(Bound<'py, PyAny>, (StateTuple,))> {
        let restore = py.import("drop7._drop7")?.getattr("_restore_game")?;
        Ok((restore, (self.state_tuple(),)))
    }

    /// `repr(game)`: seed, driver, moves played, score, level, next disc,
    /// moves remaining and game over.
    fn __repr__(&self) -> String {
        let st = self.inner.state();
        format!(
            "drop7.Game(seed={}, driver={:?}, moves_played={}, score={}, level={}, next_disc={}, moves_remaining={}, game_over={})",
            self.inner.driver().seed(),
            self.kind.as_str(),
            st.moves_played,
            st.score,
            st.level,
            self.shown_next()
                .map_or_else(|| "None".to_string(), |d| d.to_string()),
            st.position.moves_remaining,
            if st.position.game_over {
                "True"
            } else {
                "False"
            }
        )
    }
}

/// Rebuilds a pickled `drop7.Game` from its state tuple (what
/// `Game.__reduce__` gives pickle; not meant to be called by hand).
///
/// `state` (format version 1): `(1, board (str, 49 digits 0-9, row 0
/// first), next_disc (1-7), moves_remaining (0-5), score (0..2**64-1),
/// level (1..2**32-1), moves_played (0..2**32-1), seed (0..2**32-1),
/// driver ("headless" or "stream"), terminal_reason ("blocked-rise",
/// "no-legal-column" or None), stream_state (the stream driver's
/// Mulberry32 state 0..2**32-1; None for the headless driver))`.
///
/// Raises TypeError for a state that is not a tuple or a field of the wrong
/// type, ValueError for an unsupported version, a wrong length, a value out
/// of range, a malformed board, an unknown driver or terminal reason, or
/// parts no game reaches together (e.g. a game not over with no legal
/// column), each naming the field.
#[pyfunction]
fn _restore_game(state: &Bound<'_, PyAny>) -> PyResult<Game> {
    Game::from_state_tuple(state)
}

/// `e` with `prefix` before its message (a TypeError stays one, anything
/// else becomes a ValueError).
fn prefixed(py: Python<'_>, e: PyErr, prefix: &str) -> PyErr {
    let msg = format!("{prefix}{}", e.value(py));
    if e.is_instance_of::<PyTypeError>(py) {
        PyTypeError::new_err(msg)
    } else {
        PyValueError::new_err(msg)
    }
}

/// Rebuilds a pickled `VectorCore` from its state tuple (what
/// `VectorCore.__reduce__` gives pickle; not meant to be called by hand):
/// `(1, driver ("headless" or "stream"), max_moves (1..), next_seed
/// (0..2**32-1), pending_reset (N bool), games (N `Game` state tuples of
/// that driver))`, 1 <= N <= 2**20.
///
/// Raises TypeError or ValueError naming the field, as `_restore_game`
/// does for each game.
#[pyfunction]
fn _restore_vector(state: &Bound<'_, PyAny>) -> PyResult<VectorCore> {
    let Ok(t) = state.cast::<PyTuple>() else {
        return Err(PyTypeError::new_err(format!(
            "VectorCore state must be a tuple, got {}",
            type_name(state)
        )));
    };
    if t.len() != 6 {
        return Err(value_error(format!(
            "VectorCore state must have 6 fields (version, driver, max_moves, next_seed, pending_reset, games), got {}",
            t.len()
        )));
    }
    let version = int_arg(
        &t.get_item(0)?,
        "VectorCore state field 0 (version)",
        0,
        u32::MAX.into(),
    )?;
    if version != i128::from(VECTOR_STATE_VERSION) {
        return Err(value_error(format!(
            "VectorCore state version {version} is not supported (this drop7 reads version {VECTOR_STATE_VERSION})"
        )));
    }
    let driver: String = t
        .get_item(1)?
        .extract()
        .map_err(|_| PyTypeError::new_err("VectorCore state field 1 (driver) must be a str"))?;
    let kind = parse_driver(&driver)?;
    let max_moves = int_arg(
        &t.get_item(2)?,
        "VectorCore state field 2 (max_moves)",
        1,
        u32::MAX.into(),
    )? as u32;
    let next_seed = seed_from(&t.get_item(3)?, "VectorCore state field 3 (next_seed)")?;
    let pending_reset: Vec<bool> = t.get_item(4)?.extract().map_err(|_| {
        PyTypeError::new_err("VectorCore state field 4 (pending_reset) must be a list of bool")
    })?;
    let list = t.get_item(5)?;
    let Ok(list) = list.cast::<PyList>() else {
        return Err(PyTypeError::new_err(format!(
            "VectorCore state field 5 (games) must be a list, got {}",
            type_name(&list)
        )));
    };
    let n = list.len();
    if !(1..=MAX_NUM_ENVS).contains(&n) || pending_reset.len() != n {
        return Err(value_error(format!(
            "VectorCore state: {n} games and {} pending_reset flags (expected the same number, 1-{MAX_NUM_ENVS})",
            pending_reset.len()
        )));
    }
    let mut games = Vec::with_capacity(n);
    let mut terminal = Vec::with_capacity(n);
    for (i, item) in list.iter().enumerate() {
        let g = Game::from_state_tuple(&item)
            .map_err(|e| prefixed(item.py(), e, &format!("VectorCore state game {i}: ")))?;
        if g.kind != kind {
            return Err(value_error(format!(
                "VectorCore state game {i}: driver {:?}, not the vector's {:?}",
                g.kind.as_str(),
                kind.as_str()
            )));
        }
        if g.inner.is_over() && !pending_reset[i] {
            return Err(value_error(format!(
                "VectorCore state game {i} is over but pending_reset[{i}] is False (a finished game is always marked for reset)"
            )));
        }
        games.push(g.inner);
        terminal.push(g.terminal);
    }
    Ok(VectorCore {
        games,
        kind,
        max_moves,
        pending_reset,
        terminal,
        next_seed,
        gravity: gravity_path()?,
    })
}

/// A table that does not fit as Python's `MemoryError`, its advice in the
/// words of the Python API (`table=`, `threads=`) instead of the CLI's flags.
fn table_memory_error(e: &drop7::table::TableError) -> PyErr {
    let text = e
        .to_string()
        .replace("a smaller --table", "a smaller table=")
        .replace("fewer --threads", "fewer threads=");
    PyMemoryError::new_err(format!("table: {text}"))
}

fn check_depth_strata(depth: u32, strata: u32) -> PyResult<FairSpec> {
    if !(1..=drop7::search::MAX_DEPTH).contains(&depth) {
        return Err(value_error(format!(
            "depth must be 1-{}, got {depth}",
            drop7::search::MAX_DEPTH
        )));
    }
    if !(1..=drop7::search::MAX_STRATA).contains(&strata) {
        return Err(value_error(format!(
            "strata must be 1-{}, got {strata}",
            drop7::search::MAX_STRATA
        )));
    }
    Ok(FairSpec { depth, strata })
}

fn decision_dict<'py>(py: Python<'py>, d: &Decision) -> PyResult<Bound<'py, PyDict>> {
    let out = PyDict::new(py);
    out.set_item("action", d.action)?;
    out.set_item("values", d.values.to_vec())?;
    out.set_item("expected_scores", d.expected_scores.to_vec())?;
    out.set_item("completed_depth", d.completed_depth)?;
    let s = PyDict::new(py);
    s.set_item("work", d.stats.work)?;
    s.set_item("nodes", d.stats.nodes)?;
    s.set_item("cache_hits", d.stats.cache_hits)?;
    s.set_item("cache_entries", d.stats.cache_entries)?;
    s.set_item("evictions", d.stats.evictions)?;
    s.set_item("leaf_calls", d.stats.leaf_calls)?;
    s.set_item("move_calls", d.stats.move_calls)?;
    out.set_item("stats", s)?;
    Ok(out)
}

/// The fair expectimax search's decision on one position (spec: search.md),
/// bit-identical to `drop7 decide` with the same options.
///
/// `position`: a `drop7.Game`, or a mapping {"board", "next",
/// "movesRemaining"[, "gameOver"]} as a `drop7 decide` root line ("board" a
/// 49-character string or an integer array of shape (7, 7); "next" 1-7;
/// "movesRemaining" 1-5; a game-over line may omit "next" and have
/// "movesRemaining" 0). `depth` 1-8 (default 4), `strata` 1-32 (default
/// 5), `table` "none", "lru:C", "dm:N" or "sa:N[:W]" (default as `drop7
/// decide`'s: "sa:65536:4", from depth 5 "sa:1048576:4"), `max_work`
/// 0..2**64-1 (default: never binds), `threads` 1-256 (the same action,
/// values and completed depth as one thread; see `drop7 decide --threads`).
///
/// Returns a dict: "action" (int column 0-6, None for a game-over
/// position), "values" (list of 7 floats, None for an illegal column),
/// "expected_scores" (list of 7 floats or None: mean immediate score
/// deltas), "completed_depth" (int) and "stats" (dict of ints "work",
/// "nodes", "cache_hits", "cache_entries", "evictions", "leaf_calls",
/// "move_calls"; with an "sa:" or "dm:" table and a budget that cannot
/// bind, the search runs only iteration `depth`, and the stats count it
/// alone, as `drop7 decide`'s do; with `threads` 2 or more also the
/// unreported iteration `depth` - 1, which orders the split's tasks).
///
/// A `max_work` that lets no iteration complete gives a UserWarning (the
/// action is then the fallback column), as `drop7 decide` warns of it.
/// Releases the GIL; Ctrl-C stops the search (KeyboardInterrupt). Raises
/// ValueError for an option out of range or a malformed position,
/// TypeError for a wrong type, MemoryError naming the table and its size
/// when `table` cannot be allocated.
#[pyfunction]
#[pyo3(
    signature = (position, depth = None, strata = None, table = None, max_work = None, threads = None),
    text_signature = "(position, depth=4, strata=5, table=None, max_work=None, threads=1)"
)]
fn decide<'py>(
    py: Python<'py>,
    position: &Bound<'py, PyAny>,
    depth: Option<&Bound<'py, PyAny>>,
    strata: Option<&Bound<'py, PyAny>>,
    table: Option<&str>,
    max_work: Option<&Bound<'py, PyAny>>,
    threads: Option<&Bound<'py, PyAny>>,
) -> PyResult<Bound<'py, PyDict>> {
    let pos = position_from(py, position)?;
    let depth = int_or(depth, "depth", 1, drop7::search::MAX_DEPTH.into(), 4)? as u32;
    let strata = int_or(strata, "strata", 1, drop7::search::MAX_STRATA.into(), 5)? as u32;
    let max_work = opt_u64(max_work, "max_work")?;
    let threads = int_or(threads, "threads", 1, MAX_SEARCH_THREADS as i128, 1)? as usize;
    let config = check_depth_strata(depth, strata)?.config(max_work);
    let table = match table {
        Some(t) => parse_table(t)?,
        None => TableSpec::default_for_depth(depth),
    };
    let path = gravity_path()?;
    // The search runs on a thread of its own, without the GIL; this thread
    // checks for signals (Ctrl-C) every 20 ms and stops the search on one.
    let stop = Arc::new(AtomicBool::new(false));
    let d = std::thread::scope(|scope| -> PyResult<Decision> {
        let flag = Arc::clone(&stop);
        let run = scope.spawn(move || {
            drop7::with_gravity!(path, |g| drop7::with_table!(table, |t| {
                let mut search =
                    ParallelSearch::new(FairSearch::new(FairLeaf, t, g, config), threads);
                // Ctrl-C raises, discarding the decision: an interrupt,
                // not a D7P-style stop (FairSearch::set_interrupt).
                search.set_interrupt(Some(flag));
                search.decide(&pos)
            }))
        });
        while !run.is_finished() {
            py.detach(|| std::thread::sleep(Duration::from_millis(20)));
            if let Err(e) = py.check_signals() {
                stop.store(true, Ordering::Relaxed);
                let _ = py.detach(|| run.join());
                return Err(e);
            }
        }
        run.join()
            .map_err(|_| PyRuntimeError::new_err("decide: the search thread panicked"))?
            .map_err(|e| table_memory_error(&e))
    })?;
    // As `drop7 decide` warns (a position with no legal column has no
    // iteration to complete).
    if d.completed_depth == 0 && !pos.game_over && pos.board.legal_mask() != 0 {
        let w = config.max_work;
        user_warning(
            py,
            &format!(
                "max_work {w} let no iteration complete: the action is the fallback (first \
                 legal column of 3,2,4,1,5,0,6), values are None"
            ),
            1,
        )?;
    }
    decision_dict(py, &d)
}

/// Issues a `UserWarning` at the user's line: `stacklevel` 1 for a function
/// of this module that Python code calls directly, 2 for one called through
/// a wrapper of the `drop7` package.
fn user_warning(py: Python<'_>, text: &str, stacklevel: i32) -> PyResult<()> {
    let text = std::ffi::CString::new(text.replace('\0', "?")).unwrap_or_default();
    PyErr::warn(
        py,
        py.get_type::<PyUserWarning>().as_any(),
        &text,
        stacklevel,
    )
}

/// The fair leaf's value of one position (spec: search.md §4), as `drop7
/// leaf` prints it.
///
/// `position`: a `drop7.Game`, or a mapping {"board", "next",
/// "movesRemaining"[, "gameOver"]} as a `drop7 leaf` line ("board" a
/// 49-character string or an integer array of shape (7, 7); "next" 1-7;
/// "movesRemaining" 1-5; a game-over line may omit "next" and have
/// "movesRemaining" 0). Returns a float (-2500000.0 for a game-over
/// position). Raises ValueError for a malformed position, TypeError for a
/// wrong type.
#[pyfunction]
fn leaf(py: Python<'_>, position: &Bound<'_, PyAny>) -> PyResult<f64> {
    let pos = position_from(py, position)?;
    Ok(FairLeaf::value(&pos))
}

/// Plays one game per seed with the core runner (the code path of `drop7
/// play --out`: the same policy specs, policy construction, per-game detail
/// and run-level fields); returns the records as one JSON array text (the
/// Python side parses it, keeping key order). `cohortSeedStart` /
/// `cohortGames` are present when `seeds` are consecutive, as in a `drop7
/// play` run; absent otherwise.
#[pyfunction]
#[pyo3(signature = (policy, seeds, threads = None, max_moves = None, driver = "headless", table = None, max_work = None))]
#[allow(clippy::too_many_arguments)]
fn play_json(
    py: Python<'_>,
    policy: &str,
    seeds: &Bound<'_, PyAny>,
    threads: Option<&Bound<'_, PyAny>>,
    max_moves: Option<&Bound<'_, PyAny>>,
    driver: &str,
    table: Option<&str>,
    max_work: Option<&Bound<'_, PyAny>>,
) -> PyResult<String> {
    let threads = int_or(threads, "threads", 0, MAX_THREADS as i128, 0)? as usize;
    let max_moves = max_moves_arg(max_moves)?;
    let max_work = opt_u64(max_work, "max_work")?;
    let name: PolicyName = policy.parse().map_err(|e| {
        if policy.starts_with("d7p:") {
            value_error(format!(
                "policy {policy:?}: D7P engines are played by the CLI only (drop7 play --policy d7p:COMMAND)"
            ))
        } else {
            value_error(format!("policy: {e}"))
        }
    })?;
    let kind = parse_driver(driver)?;
    let table_given = table.is_some();
    let table = match table {
        Some(t) => parse_table(t)?,
        None => name.default_table(),
    };
    if seeds.is_instance_of::<PyString>()
        || seeds.is_instance_of::<pyo3::types::PyBytes>()
        || seeds.is_instance_of::<pyo3::types::PyByteArray>()
    {
        return Err(PyTypeError::new_err(format!(
            "seeds must be an iterable of integers (e.g. range(1, 1001)), not a string or \
             bytes (got {})",
            type_name(seeds)
        )));
    }
    let iter = seeds.try_iter().map_err(|_| {
        PyTypeError::new_err(format!(
            "seeds must be an iterable of integers (e.g. range(1, 1001)), got {}",
            type_name(seeds)
        ))
    })?;
    // `play` keeps every game's record until it returns: about 2,400-2,800
    // bytes a game (the Rust record, its JSON text, the Python dict; fair
    // records are the larger), counted as 3,000. A cohort that needs more
    // than three quarters of the memory (the machine's, or its cgroup's
    // limit), or whose seeds and records cannot be reserved, is a
    // MemoryError before the first game (checked as soon as `len(seeds)` is
    // known, else while the seeds are read), not an abort of the interpreter
    // or the kernel's OOM killer later.
    const BYTES_PER_GAME: u128 = 3_000;
    let memory = physical_memory(py);
    let max_games = memory.map_or(usize::MAX, |m| (m * 3 / 4 / BYTES_PER_GAME) as usize);
    let too_many = |games: String| {
        let machine = memory.map_or(String::new(), |m| {
            format!(
                " (a cohort may take three quarters of the {} MB this process may use)",
                m >> 20
            )
        });
        PyMemoryError::new_err(format!(
            "play: the records of {games} games do not fit in memory{machine}: up to \
             {BYTES_PER_GAME} bytes a game are kept until play returns; play fewer seeds per \
             call (drop7 play --out streams a cohort of any size to a file)"
        ))
    };
    let reserve = |list: &mut Vec<u32>, recs: &mut Vec<GameRecord>, n: usize| {
        list.try_reserve_exact(n - list.len())
            .and_then(|()| recs.try_reserve_exact(n))
    };
    let mut list = Vec::new();
    let mut recs: Vec<GameRecord> = Vec::new();
    if let Ok(n) = seeds.len() {
        if n > max_games {
            return Err(too_many(n.to_string()));
        }
        reserve(&mut list, &mut recs, n).map_err(|_| too_many(n.to_string()))?;
    }
    for (i, s) in iter.enumerate() {
        if list.len() == list.capacity() {
            let more = list.len().saturating_mul(2).max(1 << 10);
            reserve(&mut list, &mut recs, more)
                .map_err(|_| too_many(format!("more than {}", list.len())))?;
        }
        if list.len() >= max_games {
            return Err(too_many(format!("more than {max_games}")));
        }
        // A long iterable (range(2**32)) stays interruptible while read.
        if i % (1 << 16) == 0 {
            py.check_signals()?;
        }
        list.push(seed_from(&s?, &format!("seeds[{i}]"))?);
    }
    if list.is_empty() {
        return Ok("[]".to_string());
    }
    // Once the arguments are known to be valid, as `drop7 play` notes and
    // warns of them.
    match name.fair() {
        None => {
            for (arg, given) in [("table", table_given), ("max_work", max_work.is_some())] {
                if given {
                    user_warning(
                        py,
                        &format!("{arg} applies to fair policies only: ignored for {name}"),
                        2,
                    )?;
                }
            }
        }
        Some(f) => {
            if let Some(w) = max_work
                && !f.budget_completes_opening(w)
            {
                user_warning(
                    py,
                    &format!(
                        "max_work {w} lets no search iteration complete on the opening position: \
                         such decisions play the fallback (first legal column of 3,2,4,1,5,0,6)"
                    ),
                    2,
                )?;
            }
        }
    }
    let threads = if threads == 0 {
        drop7::runner::available_threads()
    } else {
        threads
    };
    let path = gravity_path()?;
    let labels = RunLabels {
        policy: name.to_string(),
        driver: kind,
    };
    let fair = FairSettings {
        table,
        max_work,
        search_gravity: path,
        search_threads: name.search_threads(list.len() as u64, threads),
        workers: 1,
    };
    let template = record_template(
        &labels,
        name.fair().map(|f| (f, &fair)),
        max_moves,
        seed_range(&list),
        None,
    );
    let cfg = CohortConfig {
        seed_start: list[0],
        games: list.len() as u64,
        max_moves,
        threads,
        labels,
    };
    let fair = FairSettings {
        workers: cfg.workers(),
        ..fair
    };
    // The games run on a thread of their own, without the GIL; this thread
    // checks for signals (Ctrl-C) every 50 ms and stops the run on one (a
    // fair decision in progress too: it is cut short).
    let stop = Arc::new(AtomicBool::new(false));
    let ctl = RunControl {
        detail: true,
        stop: Some(&stop),
        moves: None,
    };
    std::thread::scope(|scope| -> PyResult<()> {
        let run = scope.spawn(|| {
            drop7::with_gravity!(path, |g| drop7::with_builtin_policy!(name, fair, |make| {
                let make = drop7::runner::interruptible(make, &stop);
                run_seeds_with(PackedEngine(g), make, &list, &cfg, &ctl, |mut rec| {
                    stamp_record(&mut rec, &template);
                    recs.push(rec);
                    Ok(())
                })
            }))
        });
        while !run.is_finished() {
            py.detach(|| std::thread::sleep(Duration::from_millis(50)));
            if let Err(e) = py.check_signals() {
                stop.store(true, Ordering::Relaxed);
                let _ = py.detach(|| run.join());
                return Err(e);
            }
        }
        match run.join() {
            Ok(Ok(Ok(_))) => Ok(()),
            Ok(Ok(Err(e))) => Err(value_error(format!("play: {e}"))),
            Ok(Err(e)) => Err(table_memory_error(&e)),
            Err(_) => Err(PyRuntimeError::new_err("play: a worker thread panicked")),
        }
    })?;
    serde_json::to_string(&recs).map_err(|e| value_error(format!("records: {e}")))
}

/// N games stepped together (the engine of `drop7.Drop7VectorEnv`):
/// `VectorCore(num_envs, driver="headless", max_moves=None)`.
#[pyclass(module = "drop7._drop7")]
struct VectorCore {
    games: Vec<CoreGame<Portable>>,
    kind: DriverKind,
    max_moves: u32,
    /// Game `i` ended (terminated or truncated) on the last step: the next
    /// step resets it and ignores its action (next-step autoreset).
    pending_reset: Vec<bool>,
    /// Why game `i` ended, if it did (kept for its pickled state).
    terminal: Vec<Option<TerminalReason>>,
    next_seed: u32,
    /// Gravity path of the moves (`DROP7_GRAVITY`, else auto, as `drop7 play`).
    gravity: GravityPath,
}

/// Version of the state tuple a pickled `VectorCore` carries (see
/// [`VectorCore::__reduce__`]); `_restore_vector` reads this version only.
const VECTOR_STATE_VERSION: u32 = 1;

/// A version-1 vector state: `(version, driver, max_moves, next_seed,
/// pending_reset, games)`.
type VectorStateTuple = (u32, &'static str, u32, u32, Vec<bool>, Vec<StateTuple>);

type Obs<'py> = (
    Bound<'py, PyArray3<i8>>,
    Bound<'py, PyArray1<i64>>,
    Bound<'py, PyArray1<i64>>,
    Bound<'py, PyArray1<i64>>,
    Bound<'py, PyArray2<bool>>,
);

impl VectorCore {
    fn start(&self, seed: u32) -> CoreGame<Portable> {
        CoreGame::new(self.kind.driver(seed))
    }

    /// Starts game `i` with seed `seed_of(i)`, every game afresh; later
    /// autoresets take `next_seed`, `next_seed + 1`, ...
    fn restart(&mut self, seed_of: impl Fn(usize) -> u32, next_seed: u32) {
        for i in 0..self.games.len() {
            self.games[i] = self.start(seed_of(i));
        }
        self.pending_reset.fill(false);
        self.terminal.fill(None);
        self.next_seed = next_seed;
    }

    fn observe<'py>(&self, py: Python<'py>) -> Obs<'py> {
        let n = self.games.len();
        let mut board = Vec::with_capacity(n * CELLS);
        let mut next = Vec::with_capacity(n);
        let mut rise = Vec::with_capacity(n);
        let mut level = Vec::with_capacity(n);
        let mut mask = Vec::with_capacity(n * 7);
        for g in &self.games {
            let st = g.state();
            let b = st.position.board;
            for r in 0..SIZE {
                for c in 0..SIZE {
                    board.push(b.cell(r, c) as i8);
                }
            }
            // No next disc once a game is over: 1, a placeholder inside
            // the observation space (as `Drop7Env`).
            next.push(if st.position.game_over {
                1
            } else {
                i64::from(st.position.next_disc)
            });
            rise.push(i64::from(st.position.moves_remaining));
            level.push(i64::from(st.level));
            mask.extend_from_slice(&mask_of(&b, st.position.game_over));
        }
        (
            Array3::from_shape_vec((n, SIZE, SIZE), board)
                .expect("n*49 cells")
                .into_pyarray(py),
            Array1::from(next).into_pyarray(py),
            Array1::from(rise).into_pyarray(py),
            Array1::from(level).into_pyarray(py),
            Array2::from_shape_vec((n, 7), mask)
                .expect("n*7 flags")
                .into_pyarray(py),
        )
    }
}

#[pymethods]
impl VectorCore {
    #[new]
    #[pyo3(signature = (num_envs, driver = "headless", max_moves = None))]
    fn new(
        num_envs: &Bound<'_, PyAny>,
        driver: &str,
        max_moves: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<VectorCore> {
        let num_envs = int_arg(num_envs, "num_envs", 1, MAX_NUM_ENVS as i128)? as usize;
        let max_moves = max_moves_arg(max_moves)?;
        let kind = parse_driver(driver)?;
        Ok(VectorCore {
            games: (0..num_envs)
                .map(|i| CoreGame::new(kind.driver(i as u32)))
                .collect(),
            kind,
            max_moves,
            pending_reset: vec![false; num_envs],
            terminal: vec![None; num_envs],
            next_seed: num_envs as u32,
            gravity: gravity_path()?,
        })
    }

    /// Restarts every game: game `i` gets seed `seed + i` (mod 2^32); later
    /// autoresets continue with `seed + N`, `seed + N + 1`, ... in env order.
    /// Returns `(board int8 (N, 7, 7), next_disc int64 (N,), moves_remaining
    /// int64 (N,), level int64 (N,), action_mask bool (N, 7))`.
    fn reset<'py>(&mut self, py: Python<'py>, seed: &Bound<'py, PyAny>) -> PyResult<Obs<'py>> {
        let seed = seed_from(seed, "seed")?;
        let n = self.games.len() as u32;
        self.restart(|i| seed.wrapping_add(i as u32), seed.wrapping_add(n));
        Ok(self.observe(py))
    }

    /// Restarts game `i` with seed `seeds[i]` (`seeds` N ints 0..2**32-1);
    /// later autoresets continue with `max(seeds) + 1`, `+ 2`, ... (mod
    /// 2^32) in env order. Returns what `reset` returns.
    fn reset_each<'py>(
        &mut self,
        py: Python<'py>,
        seeds: &Bound<'py, PyAny>,
    ) -> PyResult<Obs<'py>> {
        let n = self.games.len();
        let list: Vec<Bound<'py, PyAny>> = seeds
            .try_iter()
            .map_err(|_| PyTypeError::new_err("seeds must be a sequence of integers"))?
            .collect::<PyResult<_>>()?;
        if list.len() != n {
            return Err(value_error(format!(
                "seed must be one integer or {n} (one per env), got {}",
                list.len()
            )));
        }
        let mut parsed = Vec::with_capacity(n);
        for (i, s) in list.iter().enumerate() {
            parsed.push(seed_from(s, &format!("seed[{i}]"))?);
        }
        let next = parsed.iter().max().copied().unwrap_or(0).wrapping_add(1);
        self.restart(|i| parsed[i], next);
        Ok(self.observe(py))
    }

    /// One move in every game. `actions`: int64 `(N,)`. Returns
    /// `((board int8 (N, 7, 7), next_disc int64 (N,), moves_remaining int64
    /// (N,), level int64 (N,), action_mask bool (N, 7)), reward float64 (N,),
    /// terminated bool (N,), truncated bool (N,), autoreset bool (N,))`.
    #[allow(clippy::type_complexity)]
    fn step<'py>(
        &mut self,
        py: Python<'py>,
        actions: PyReadonlyArray1<'py, i64>,
    ) -> PyResult<(
        Obs<'py>,
        Bound<'py, PyArray1<f64>>,
        Bound<'py, PyArray1<bool>>,
        Bound<'py, PyArray1<bool>>,
        Bound<'py, PyArray1<bool>>,
    )> {
        let n = self.games.len();
        if actions.len() != n {
            return Err(value_error(format!(
                "actions must have shape ({n},), got {}",
                shape_text(actions.shape())
            )));
        }
        let acts = actions.as_slice()?;
        // Check every action first: on a bad one nothing changes.
        for (i, (&a, g)) in acts.iter().zip(&self.games).enumerate() {
            if self.pending_reset[i] {
                continue;
            }
            if !(0..7).contains(&a) {
                return Err(value_error(format!(
                    "actions[{i}] = {a} is out of range 0-6"
                )));
            }
            if !g.board().is_legal(a as usize) {
                return Err(value_error(format!(
                    "actions[{i}] = {a}: column {a} of env {i} is full (see info[\"action_mask\"][{i}])"
                )));
            }
            // Only a restored state can reach this: refused as `Game.step`
            // refuses it (a finished game is refused on restore).
            if let Some(limit) = counters_at_limit(g.state()) {
                return Err(value_error(format!("env {i}: {limit}; reset the env")));
            }
        }
        let acts = acts.to_vec();
        let mut reward = vec![0.0f64; n];
        let mut terminated = vec![false; n];
        let mut truncated = vec![false; n];
        let mut autoreset = vec![false; n];
        let path = self.gravity;
        py.detach(|| {
            drop7::with_gravity!(path, |gravity| {
                for i in 0..n {
                    if self.pending_reset[i] {
                        let seed = self.next_seed;
                        self.next_seed = self.next_seed.wrapping_add(1);
                        self.games[i] = self.start(seed);
                        self.pending_reset[i] = false;
                        self.terminal[i] = None;
                        autoreset[i] = true;
                        continue;
                    }
                    // The same game on the selected gravity path (results
                    // never depend on the path).
                    let slot = &mut self.games[i];
                    let mut g = CoreGame::from_state(*slot.state(), *slot.driver(), gravity);
                    let s = g
                        .play_into(acts[i] as usize, &mut ())
                        .expect("checked legal above");
                    *slot = CoreGame::from_state(*g.state(), *g.driver(), Portable);
                    reward[i] = s.score_delta as f64;
                    terminated[i] = s.terminal.is_some();
                    self.terminal[i] = s.terminal;
                    truncated[i] = !terminated[i] && g.state().moves_played >= self.max_moves;
                    self.pending_reset[i] = terminated[i] || truncated[i];
                }
            })
        });
        Ok((
            self.observe(py),
            Array1::from(reward).into_pyarray(py),
            Array1::from(terminated).into_pyarray(py),
            Array1::from(truncated).into_pyarray(py),
            Array1::from(autoreset).into_pyarray(py),
        ))
    }

    /// `pickle.dumps(core)` (and so `Drop7VectorEnv`'s pickle):
    /// `(drop7._drop7._restore_vector, (state,))`, `state` plain Python
    /// values (version 1): `(1, driver, max_moves, next_seed, pending_reset
    /// (list of N bool), games (list of N `Game` state tuples))`. The copy
    /// steps on exactly as this one (same games, autoresets and seeds).
    fn __reduce__<'py>(
        &self,
        py: Python<'py>,
    ) -> PyResult<(Bound<'py, PyAny>, (VectorStateTuple,))> {
        let restore = py.import("drop7._drop7")?.getattr("_restore_vector")?;
        let games = self
            .games
            .iter()
            .zip(&self.terminal)
            .map(|(g, &terminal)| {
                Game {
                    inner: g.clone(),
                    kind: self.kind,
                    terminal,
                }
                .state_tuple()
            })
            .collect();
        Ok((
            restore,
            ((
                VECTOR_STATE_VERSION,
                self.kind.as_str(),
                self.max_moves,
                self.next_seed,
                self.pending_reset.clone(),
                games,
            ),),
        ))
    }

    /// Seeds of the games now being played, uint32 `(N,)`.
    #[getter]
    fn seeds<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray1<u32>> {
        Array1::from(
            self.games
                .iter()
                .map(|g| g.driver().seed())
                .collect::<Vec<_>>(),
        )
        .into_pyarray(py)
    }

    /// Scores of the games now being played, int64 `(N,)`.
    #[getter]
    fn scores<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray1<i64>> {
        Array1::from(
            self.games
                .iter()
                .map(|g| g.state().score as i64)
                .collect::<Vec<_>>(),
        )
        .into_pyarray(py)
    }

    /// Moves played in the games now being played, int64 `(N,)`.
    #[getter]
    fn moves_played<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray1<i64>> {
        Array1::from(
            self.games
                .iter()
                .map(|g| i64::from(g.state().moves_played))
                .collect::<Vec<_>>(),
        )
        .into_pyarray(py)
    }

    /// int: the number of games.
    #[getter]
    fn num_envs(&self) -> usize {
        self.games.len()
    }

    /// int: the move cap (a game that reaches it is truncated).
    #[getter]
    fn max_moves(&self) -> u32 {
        self.max_moves
    }
}

#[pymodule]
fn _drop7(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<Game>()?;
    m.add_class::<VectorCore>()?;
    m.add_function(wrap_pyfunction!(decide, m)?)?;
    m.add_function(wrap_pyfunction!(leaf, m)?)?;
    m.add_function(wrap_pyfunction!(play_json, m)?)?;
    m.add_function(wrap_pyfunction!(_restore_game, m)?)?;
    m.add_function(wrap_pyfunction!(_restore_vector, m)?)?;
    m.add("DROPS_PER_LEVEL", DROPS_PER_LEVEL)?;
    m.add("DEFAULT_MAX_MOVES", DEFAULT_MAX_MOVES)?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
