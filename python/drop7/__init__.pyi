"""Type stubs of the drop7 package (the native part lives in drop7._drop7).

Board encoding everywhere: ``numpy.int8`` array of shape ``(7, 7)``, row 0 at
the top (the trace format's 49-character board, row by row), cell codes
0 empty, 1-7 numbered discs, 8 solid gray disc, 9 cracked gray disc.
Spec: spec/rules.md (engine), search.md (decide, leaf),
trace-format.md (moves), formats.md (records of ``drop7 play --out``).

``Wave``, ``MoveOutcome``, ``Position``, ``SearchStats``, ``Decision`` and
``GameRecord`` are ``TypedDict`` shapes of the plain dicts the calls return:
names for type checkers only (``drop7.Decision`` does not exist at run time).
"""

from typing import Any, Dict, Iterable, List, Literal, Mapping, Optional, Sequence, Tuple, TypedDict, Union, overload

import gymnasium
import numpy as np
import numpy.typing as npt
from gymnasium.vector import VectorEnv

__version__: str
DEFAULT_MAX_MOVES: int  # 2000, the move cap of `drop7 play`
DROPS_PER_LEVEL: int  # 5 drops between rises (Hardcore)

BoardLike = Union[str, npt.ArrayLike]
"""A 49-character board string, or an integer array-like of shape (7, 7)."""

class Wave(TypedDict):
    depth: int  # chain depth, 1 for the first wave of a drop
    cleared: int  # poppers removed
    revealed: int  # gray discs revealed (cracked -> numbered)
    points: int  # cleared * floor(7 * depth**2.5)

class MoveOutcome(TypedDict):
    disc: int  # the disc dropped, 1-7
    column: int  # 0-6
    score_delta: int  # points of the move (waves and bonuses)
    waves: List[Wave]  # first cascade, then the rise cascade
    reveals: int  # gray discs revealed by the move
    cleared_board: bool  # a 70,000 clear bonus was paid
    level_advanced: bool  # a rise happened (17,000 paid)
    game_over: bool
    terminal_reason: Optional[Literal["blocked-rise", "no-legal-column"]]
    score: int  # score after the move
    level: int  # level after the move
    moves_remaining: int  # drops to the next rise after the move
    next_disc: Optional[int]  # the visible next disc, None once the game is over

class Position(TypedDict, total=False):
    board: str  # 49 characters, row 0 first
    next: Optional[int]  # next disc 1-7 (None in Game.position() once the game is over)
    movesRemaining: int  # drops to the rise 1-5 (0 in Game.position() after a blocked rise)
    gameOver: bool

PositionLike = Union["Game", Mapping[str, Any]]
"""A Game, or a mapping with "board" (BoardLike), "next" (1-7),
"movesRemaining" (1-5) and optionally "gameOver" (the root lines of
`drop7 decide`; "next_disc"/"moves_remaining"/"game_over" also accepted).
With "gameOver": True, "next" may be left out and "movesRemaining" may be 0
(a `drop7 trace` line after a blocked rise), as `drop7 decide`/`leaf` read it."""

class Game:
    """One game of Drop7 Hardcore on the exact engine.

    ``Game(seed, driver="headless")``: the reference game of ``seed``
    (0..2**32-1); ``driver`` is "headless" (per-move seeds, the research
    driver) or "stream" (one Mulberry32 stream). Raises ValueError for a seed
    out of range or an unknown driver, TypeError for a non-integer seed.

    A game can be pickled (protocol 2 or later) and copied (``copy()``,
    ``copy.copy``, ``copy.deepcopy``): the copy has the same state, seed,
    driver and terminal reason and the same randomness to come (the same
    columns give the same outcomes). The pickle holds a tuple of plain
    Python values (state format version 1) read back by
    ``drop7._drop7._restore_game``; a malformed one raises ValueError or
    TypeError naming the field.
    """

    def __init__(self, seed: int, driver: str = "headless") -> None: ...
    @staticmethod
    def from_board(
        board: BoardLike,
        next_disc: int,
        moves_remaining: Optional[int] = None,
        *,
        score: int = 0,
        level: int = 1,
        moves_played: int = 0,
        seed: Optional[int] = None,
        driver: str = "headless",
    ) -> "Game":
        """A game at a given position. ``moves_remaining`` defaults to 5;
        ``seed`` is 0..2**32-1, and ``None`` (the default) means seed 0.
        With the headless driver, the next move's reveals and next disc
        come from (seed, moves_played), as in the game that reached it; the
        stream driver starts the seed's stream afresh (its draws depend on
        every draw before, which a board does not carry; copy or pickle a
        ``Game`` to continue a stream game exactly).
        ``score`` 0..2**53, ``level`` 1..2**31 and ``moves_played``
        0..2**31: bounds well below the counters' limits (u64, u32), so
        that playing on never wraps a counter (``step`` refuses a move with
        ValueError rather than wrap, which no game from these bounds reaches
        within 2**31 moves).
        Raises TypeError for a non-integer board dtype, ValueError for a
        wrong shape, a cell outside 0-9, a floating disc, next_disc outside
        1-7, moves_remaining outside 1-5, or score, level or moves_played
        outside their bounds (naming the argument and the range)."""
    def step(self, column: int) -> MoveOutcome:
        """Drops the next disc into ``column`` (0-6). Raises ValueError for a
        column out of range, a full column or a game already over (the game
        is unchanged), TypeError for a non-integer."""
    @property
    def legal_columns(self) -> List[int]:
        """Columns that are not full, ascending; [] once the game is over."""
    @property
    def action_mask(self) -> npt.NDArray[np.bool_]:
        """bool (7,): True for a legal column."""
    @property
    def board(self) -> npt.NDArray[np.int8]:
        """int8 (7, 7), row 0 at the top (a new array each time)."""
    @property
    def board_string(self) -> str:
        """The 49-character board, row 0 first."""
    @property
    def next_disc(self) -> Optional[int]:
        """The disc the next move drops, 1-7; None once the game is over."""
    @property
    def moves_remaining(self) -> int:
        """Drops left before the rise, 1-5 (0 after a blocked rise)."""
    @property
    def level(self) -> int:
        """1 + rises so far."""
    @property
    def score(self) -> int:
        """Points so far."""
    @property
    def moves_played(self) -> int: ...
    @property
    def game_over(self) -> bool: ...
    @property
    def terminal_reason(self) -> Optional[Literal["blocked-rise", "no-legal-column"]]: ...
    @property
    def seed(self) -> int: ...
    @property
    def driver(self) -> str: ...
    def position(self) -> Position:
        """The public position as a `drop7 decide` root line."""
    def copy(self) -> "Game":
        """An independent copy (same state, same randomness to come)."""
    def __copy__(self) -> "Game": ...
    def __deepcopy__(self, memo: Any) -> "Game": ...
    def __reduce__(self) -> Tuple[Any, Tuple[Tuple[Any, ...]]]:
        """For pickle: ``(drop7._drop7._restore_game, (state,))``."""

class SearchStats(TypedDict):
    work: int  # moves applied + leaves evaluated (search.md §5)
    nodes: int
    cache_hits: int
    cache_entries: int
    evictions: int
    leaf_calls: int
    move_calls: int

class Decision(TypedDict):
    action: Optional[int]  # column to play; None for a game-over position
    values: List[Optional[float]]  # 7 per-column values, None for an illegal column
    expected_scores: List[Optional[float]]  # 7 mean immediate score deltas
    completed_depth: int  # last completed iterative-deepening depth
    stats: SearchStats

def decide(
    position: PositionLike,
    depth: int = 4,
    strata: int = 5,
    table: Optional[str] = None,
    max_work: Optional[int] = None,
    threads: int = 1,
) -> Decision:
    """The fair expectimax search's decision (spec: search.md), bit-identical
    to `drop7 decide` with the same options. ``depth`` 1-8, ``strata`` 1-32,
    ``table`` "none", "lru:C", "dm:N" or "sa:N[:W]" (default as `drop7
    decide`'s: "sa:65536:4", from depth 5 "sa:1048576:4", 46 MB);
    ``max_work`` defaults to W(D,S)+1 (never binds). ``threads`` 1-256
    split the decision (`drop7 decide --threads`): the same ``action``,
    ``values`` and ``completed_depth`` as one thread; with a table the
    ``stats`` counters differ from one thread's and from run to run. With
    an "sa:" or "dm:" table and a budget that cannot bind, only iteration
    ``depth`` runs (the shallower ones cannot change the answer) and
    ``stats`` count it alone, as `drop7 decide`'s do (with ``threads`` 2 or
    more they also count the unreported iteration ``depth`` - 1, which
    orders the split's tasks). A ``max_work`` that lets no iteration
    complete gives a UserWarning ("max_work 0 let no iteration complete:
    …"; ``action`` is then the fallback column, ``values`` all None), as
    `drop7 decide` warns of it.
    Releases the GIL; Ctrl-C stops the search (KeyboardInterrupt). Raises
    ValueError for options out of range (``max_work`` 0-2**64-1) or a
    malformed position, TypeError for a wrong type, MemoryError when the
    table cannot be allocated."""

def leaf(position: PositionLike) -> float:
    """The fair leaf's value of a position (search.md §4), as `drop7 leaf`;
    -2500000.0 for a game-over position."""

class GameRecord(TypedDict, total=False):
    """One game's record, as `drop7 play --out` writes it (formats.md "Game
    record"); keys in this order. Fields marked "fair" are absent for the
    other policies."""

    seed: str  # "0x…" (8 hex digits)
    policy: str  # "center", "random", "greedy", "fair:dDsS"
    driver: str  # "headless" or "stream"
    score: int
    moves: int
    levels: int  # 1 + successful rises
    clears: int  # moves that paid the 70,000 clear bonus
    reveals: int  # gray discs revealed
    chainMaxDepth: int  # deepest wave (0 if nothing popped)
    terminalReason: Literal["blocked-rise", "no-legal-column", "move-cap"]
    censored: bool  # stopped by the move cap
    ruleset: str  # "drop7-hardcore-5-v1"
    table: str  # fair: the transposition table, e.g. "sa:65536:4"
    maxWork: int  # fair: effective work budget per decision
    maxMoves: int  # the move cap
    cohortSeedStart: str  # first seed ("0x…"); only when the seeds are consecutive
    cohortGames: int  # number of seeds; only when the seeds are consecutive
    engineVersion: str  # e.g. "drop7 0.2.0"
    chainMeanDepth: Optional[float]  # mean deepest wave over the moves that popped; absent if none did
    work: int  # fair: search work summed over the game's decisions
    nodes: int  # fair: search nodes summed over the game's decisions
    wallMs: float  # wall time of the game, ms (differs between runs)
    decisionMsP50: Optional[float]  # fair: decision latency percentiles, ms (nearest rank); None otherwise
    decisionMsP95: Optional[float]
    decisionMsP99: Optional[float]
    trajectorySha256: str  # SHA-256 hex over (column digit + 49-character board) per move

@overload
def play(
    policy: str,
    seeds: Iterable[int],
    threads: int = 0,
    *,
    max_moves: int = 2000,
    driver: str = "headless",
    table: Optional[str] = None,
    max_work: Optional[int] = None,
    as_frame: Literal[False] = False,
) -> List[GameRecord]:
    """One whole game per seed; the records of `drop7 play --out` for the
    same policy, seeds and options (every field; only ``wallMs``,
    ``decisionMs*`` and ``engineVersion`` may differ), in ``seeds`` order
    whatever ``threads`` is. ``policy``: "center", "random", "greedy"
    (test data), "fair" (d4s5) or "fair:dDsS". ``seeds``: any iterable of
    integers 0..2**32-1 (consecutive seeds also give ``cohortSeedStart`` /
    ``cohortGames``). ``threads=0``: every core; a fair run with fewer
    games than threads splits each decision, as `drop7 play` does.
    ``table`` defaults as `drop7 play --table` (sa:65536:4, or sa:1048576:4
    from depth 5); ``table`` or ``max_work`` with a policy that does not
    search is ignored with a UserWarning ("table applies to fair policies
    only: ignored for center"), as `drop7 play` notes it; a fair policy's
    ``max_work`` too small for the opening decision's depth-1 iteration
    gets a UserWarning (its decisions play the fallback column), as `drop7
    play` warns of it. Releases the GIL;
    Ctrl-C stops the run (KeyboardInterrupt). Raises ValueError (unknown policy,
    driver or table, seed out of range), TypeError (seeds not integers)."""
@overload
def play(
    policy: str,
    seeds: Iterable[int],
    threads: int = 0,
    *,
    max_moves: int = 2000,
    driver: str = "headless",
    table: Optional[str] = None,
    max_work: Optional[int] = None,
    as_frame: Literal[True],
) -> Any:
    """pandas.DataFrame, one row per game (columns as GameRecord)."""

class IllegalMove(gymnasium.error.InvalidAction, ValueError):
    """An action that is not a legal column."""

class Drop7Env(gymnasium.Env[Dict[str, Any], int]):
    """``gymnasium.make("drop7/Drop7-v0")``: one game. Observation Dict:
    board int8 (7, 7); next_disc 1-7 (1, a placeholder, once the game is
    over); moves_remaining 0-5; level int64 ();
    optionally action_mask int8 (7,). Action Discrete(7). Reward: score delta.
    terminated at game over, truncated at ``max_moves``.
    ``info["action_mask"]``: bool (7,)."""

    game: Optional[Game]
    def __init__(
        self,
        driver: str = "headless",
        max_moves: int = 2000,
        action_mask_in_obs: bool = False,
        render_mode: Optional[str] = None,
    ) -> None: ...

class Drop7VectorEnv(VectorEnv):
    """N games stepped in Rust per call; next-step autoreset. Observations
    board int8 (N, 7, 7), next_disc / moves_remaining / level int64 (N,);
    rewards float64 (N,); terminations, truncations bool (N,);
    ``info["action_mask"]`` bool (N, 7), ``info["seed"]`` uint32 (N,),
    ``info["score"]`` int64 (N,). ``reset(seed=s)``: env i plays seed s+i.
    ``num_envs`` 1-1048576 (2**20; else ValueError). ``step`` before the
    first ``reset`` raises ``gymnasium.error.ResetNeeded``; ``step`` or
    ``reset`` after ``close()`` raises
    ``gymnasium.error.ClosedEnvironmentError``. Can be pickled and
    deep-copied; the copy steps on exactly as the original."""

    def __init__(
        self,
        num_envs: int = 1,
        driver: str = "headless",
        max_moves: int = 2000,
        action_mask_in_obs: bool = False,
    ) -> None: ...
    def reset(
        self,
        *,
        seed: Optional[Union[int, Sequence[int]]] = None,
        options: Optional[Dict[str, Any]] = None,
    ) -> Tuple[Dict[str, npt.NDArray[Any]], Dict[str, npt.NDArray[Any]]]:
        """Env i plays seed + i (one int), or seed[i] (a list of N ints)."""
    def step(
        self, actions: npt.ArrayLike
    ) -> Tuple[
        Dict[str, npt.NDArray[Any]],
        npt.NDArray[np.float64],
        npt.NDArray[np.bool_],
        npt.NDArray[np.bool_],
        Dict[str, npt.NDArray[Any]],
    ]: ...
