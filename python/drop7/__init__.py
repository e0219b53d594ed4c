"""drop7: Drop7 Hardcore exactly as the reference engines play it, the fair
expectimax player, and Gymnasium environments (``drop7/Drop7-v0``).

The engine and the search are the Rust core library (``drop7._drop7``); see
``drop7/__init__.pyi`` for shapes, dtypes and units of every call.

Board encoding (``Game.board``, observations): ``int8`` array of shape
``(7, 7)``, row 0 at the top (as in the trace format's 49-character board),
cell codes 0 empty, 1-7 numbered discs, 8 solid gray, 9 cracked gray.
"""

from __future__ import annotations

import json
from typing import Any, Iterable, List, Optional

try:
    from drop7._drop7 import DEFAULT_MAX_MOVES, DROPS_PER_LEVEL, Game, __version__, decide, leaf
except ModuleNotFoundError as e:  # pragma: no cover - depends on where Python runs
    if e.name != "drop7._drop7":
        raise
    import os as _os

    _here = _os.path.dirname(_os.path.abspath(__file__))
    raise ModuleNotFoundError(
        "drop7's compiled engine (drop7._drop7) is not in "
        + _here
        + ": that is the source folder, found first because Python runs in "
        "python/ (or has it on sys.path); run from another folder to import "
        "the installed package (pip install . here, pip install ./python from "
        "the repository's root), or build it in place with maturin develop",
        name=e.name,
    ) from e
from drop7 import _drop7

__all__ = [
    "Game",
    "decide",
    "leaf",
    "play",
    "Drop7Env",
    "Drop7VectorEnv",
    "IllegalMove",
    "DEFAULT_MAX_MOVES",
    "DROPS_PER_LEVEL",
    "__version__",
]


def play(
    policy: str,
    seeds: Iterable[int],
    threads: int = 0,
    *,
    max_moves: int = DEFAULT_MAX_MOVES,
    driver: str = "headless",
    table: Optional[str] = None,
    max_work: Optional[int] = None,
    as_frame: bool = False,
) -> Any:
    """Plays one whole game per seed and returns the per-game records.

    The games run on the core library's cohort runner, the code path of
    ``drop7 play --out``: for the same policy, seeds and options the records
    are the CLI's, every field (see ``GameRecord`` in ``__init__.pyi``;
    only the wall-clock fields ``wallMs`` and ``decisionMsP50/P95/P99`` and
    ``engineVersion`` may differ), in the order of ``seeds`` whatever
    ``threads`` is: a list of dicts, or with ``as_frame=True`` a pandas
    ``DataFrame`` with one row per game.

    ``policy`` is ``"center"``, ``"random"``, ``"greedy"`` (test data),
    ``"fair"`` (depth 4, 5 strata) or ``"fair:dDsS"``. ``seeds`` is any
    iterable of integers in 0..2**32-1; when they are consecutive (as in a
    ``drop7 play --seed-start S --games N`` run) the records also carry
    ``cohortSeedStart`` and ``cohortGames``, otherwise these keys are
    absent. ``threads=0`` uses every core; a fair run with fewer games than
    threads splits each decision over the spare ones (same actions, search
    counters of a table may then differ from run to run), as the CLI does.
    ``table`` (fair policies) defaults as ``drop7 play --table`` does:
    ``"sa:65536:4"``, from depth 5 ``"sa:1048576:4"``; ``table`` or
    ``max_work`` given with a policy that does not search is ignored with a
    ``UserWarning`` (``table applies to fair policies only: ignored for
    center``), as the CLI notes it, and a fair policy's ``max_work`` too
    small for the opening decision's depth-1 iteration gets one too (its
    decisions play the fallback column). The GIL is released
    while the games run; Ctrl-C stops the run and raises ``KeyboardInterrupt``.

    Raises ``ValueError`` for an unknown policy, driver or table, or a seed
    outside 0..2**32-1; ``TypeError`` when ``seeds`` is not an iterable of
    integers; ``ImportError`` for ``as_frame=True`` without pandas;
    ``MemoryError`` naming the table and its size in MB when the workers'
    tables (one per thread, allocated before the first game) do not fit, or
    the number of games when their records (up to about 3,000 bytes a game,
    kept until ``play`` returns) would need more than three quarters of the
    memory (the machine's or its cgroup limit), before the first game (``drop7 play --out`` streams a cohort of any size to a
    file). Reading ``seeds`` stays interruptible (Ctrl-C).
    """
    if as_frame:
        # Before the games: a missing pandas must not cost a whole cohort.
        try:
            import pandas as pd
        except ImportError as e:
            raise ImportError("drop7.play(..., as_frame=True) needs pandas: pip install pandas") from e
    records: List[dict] = json.loads(
        _drop7.play_json(policy, seeds, threads, max_moves, driver, table, max_work)
    )
    if as_frame:
        return pd.DataFrame.from_records(records)
    return records


from drop7.envs import Drop7Env, Drop7VectorEnv, IllegalMove, register_envs  # noqa: E402

register_envs()


def __dir__() -> List[str]:
    """The public names (``__all__``) and the submodules, without the helper
    imports (``json``, ``typing`` names)."""
    return sorted(__all__ + ["envs"])
