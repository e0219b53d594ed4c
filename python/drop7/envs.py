"""Gymnasium environments over the exact engine: ``Drop7Env`` (one game,
registered as ``drop7/Drop7-v0``) and ``Drop7VectorEnv`` (N games stepped in
Rust in one call, Gymnasium's vector API with next-step autoreset)."""

from __future__ import annotations

from typing import Any, Dict, Optional, Tuple

import copy
import operator
import re
import threading

import gymnasium
import numpy as np
from gymnasium import spaces
from gymnasium.vector import AutoresetMode, VectorEnv
from gymnasium.vector.utils import batch_space

from drop7._drop7 import DEFAULT_MAX_MOVES, Game, VectorCore

ENV_ID = "drop7/Drop7-v0"
_SEED_LIMIT = 2**32
_MAX_MOVES_LIMIT = 2**32 - 1  # as drop7.play and the vector core


class IllegalMove(gymnasium.error.InvalidAction, ValueError):
    """An action that is not a legal column (out of 0..6, or a full column)."""


def _observation_space(action_mask: bool) -> spaces.Dict:
    d = {
        "board": spaces.Box(low=0, high=9, shape=(7, 7), dtype=np.int8),
        "next_disc": spaces.Discrete(7, start=1),
        "moves_remaining": spaces.Discrete(6),
        "level": spaces.Box(low=1, high=np.iinfo(np.int64).max, shape=(), dtype=np.int64),
    }
    if action_mask:
        d["action_mask"] = spaces.MultiBinary(7)
    return spaces.Dict(d)


def _check_int(name: str, value: Any, lo: int, hi: int) -> int:
    """An integer argument (a Python or NumPy integer, not a bool) in
    ``lo..hi``: TypeError for another type, ValueError naming the range."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise TypeError(f"{name} must be an integer, got {type(value).__name__}")
    if not lo <= int(value) <= hi:
        raise ValueError(f"{name} must be {lo}-{hi}, got {value}")
    return int(value)


def _check_seed(seed: Any) -> int:
    if isinstance(seed, np.ndarray) and seed.ndim == 0 and np.issubdtype(seed.dtype, np.integer):
        seed = seed.item()
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)):
        raise TypeError(f"seed must be an integer or None, got {type(seed).__name__}")
    if not 0 <= int(seed) < _SEED_LIMIT:
        raise ValueError(f"seed must be in 0..{_SEED_LIMIT - 1} (the game seed), got {seed}")
    return int(seed)


class Drop7Env(gymnasium.Env):
    """One game of Drop7 Hardcore.

    Observation: a ``Dict`` with ``board`` (int8 ``(7, 7)``, row 0 at the top,
    codes 0 empty, 1-7 discs, 8 solid gray, 9 cracked gray), ``next_disc``
    (1-7; 1, a placeholder, once the game is over), ``moves_remaining`` (drops to the rise, 0-5; 0 only after a
    blocked rise) and ``level`` (int64 scalar array, 1 + rises); with
    ``action_mask_in_obs=True`` also ``action_mask`` (int8 ``(7,)``).
    Action: ``Discrete(7)``, the column. Reward: the move's score delta
    (points). ``terminated`` when the game ends; ``truncated`` when
    ``max_moves`` moves were played. ``info["action_mask"]`` is a bool
    ``(7,)`` array of the legal columns.

    ``reset(seed=s)`` starts exactly the reference game of seed ``s``
    (0..2**32-1): the same trajectory as ``drop7 trace --seed-start s`` for
    the same columns. Without a seed, one is drawn from ``np_random``.
    """

    metadata = {"render_modes": ["ansi"], "render_fps": 4}

    def __init__(
        self,
        driver: str = "headless",
        max_moves: int = DEFAULT_MAX_MOVES,
        action_mask_in_obs: bool = False,
        render_mode: Optional[str] = None,
    ) -> None:
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(f"render_mode must be None or 'ansi', got {render_mode!r}")
        max_moves = _check_int("max_moves", max_moves, 1, _MAX_MOVES_LIMIT)
        Game(0, driver)  # validates the driver name
        self.driver = driver
        self.max_moves = max_moves
        self.action_mask_in_obs = action_mask_in_obs
        self.render_mode = render_mode
        self.observation_space = _observation_space(action_mask_in_obs)
        self.action_space = spaces.Discrete(7)
        self.game: Optional[Game] = None

    def _obs(self) -> Dict[str, Any]:
        g = self.game
        assert g is not None
        obs = {
            "board": g.board,
            # No next disc once the game is over: 1, a placeholder inside
            # the observation space.
            "next_disc": np.int64(1 if g.next_disc is None else g.next_disc),
            "moves_remaining": np.int64(g.moves_remaining),
            "level": np.array(g.level, dtype=np.int64),
        }
        if self.action_mask_in_obs:
            obs["action_mask"] = g.action_mask.astype(np.int8)
        return obs

    def _info(self) -> Dict[str, Any]:
        g = self.game
        assert g is not None
        return {
            "action_mask": g.action_mask,
            "score": g.score,
            "moves_played": g.moves_played,
            "seed": g.seed,
        }

    def reset(
        self, *, seed: Optional[int] = None, options: Optional[Dict[str, Any]] = None
    ) -> Tuple[Dict[str, Any], Dict[str, Any]]:
        """Starts a new game: the reference game of ``seed`` (0..2**32-1), or
        of a seed drawn from ``np_random`` when ``seed`` is None. ``options``
        is ignored.

        Returns ``(observation, info)``: observation a dict with ``board``
        (numpy int8 ``(7, 7)``, row 0 at the top), ``next_disc`` (numpy
        int64 scalar, 1-7), ``moves_remaining`` (numpy int64 scalar, 0-5),
        ``level`` (numpy int64 array of shape ``()``) and, with
        ``action_mask_in_obs``, ``action_mask`` (int8 ``(7,)``); info a dict
        with ``action_mask`` (bool ``(7,)``), ``score``, ``moves_played`` and
        ``seed`` (ints). Raises TypeError for a non-integer seed, ValueError
        for one out of range.
        """
        if seed is not None:
            seed = _check_seed(seed)
        super().reset(seed=seed)
        if seed is None:
            seed = int(self.np_random.integers(0, _SEED_LIMIT))
        self.game = Game(seed, self.driver)
        return self._obs(), self._info()

    def step(self, action: Any) -> Tuple[Dict[str, Any], float, bool, bool, Dict[str, Any]]:
        """Drops the next disc into column ``action`` (an integer 0-6, or a
        numpy integer / 0-d array).

        Returns ``(observation, reward, terminated, truncated, info)``:
        observation as ``reset`` gives it; reward a float (the move's score
        delta, points); terminated (bool) at game over; truncated (bool)
        when ``max_moves`` moves were played; info as ``reset``'s plus the
        move's ``waves`` (list of dicts), ``reveals``, ``cleared_board``,
        ``level_advanced`` and ``terminal_reason``.

        Raises ``IllegalMove`` (a ValueError) for a column out of range or
        full, TypeError for a non-integer action,
        ``gymnasium.error.ResetNeeded`` before ``reset`` or after the episode
        ended.
        """
        g = self.game
        if g is None:
            raise gymnasium.error.ResetNeeded("call reset() before step()")
        if g.game_over or g.moves_played >= self.max_moves:
            raise gymnasium.error.ResetNeeded(
                "the episode has ended (terminated or truncated); call reset()"
            )
        if np.ma.is_masked(action):
            # .item() would give the value hidden under the mask.
            raise IllegalMove("action is masked: a masked NumPy value is no column")
        if isinstance(action, np.ndarray) and action.shape == ():
            action = action.item()
        if isinstance(action, bool) or not isinstance(action, (int, np.integer)):
            raise TypeError(f"action must be an integer column 0-6, got {type(action).__name__}")
        column = int(action)
        if not 0 <= column <= 6:
            raise IllegalMove(f"action {column} is out of range 0-6")
        if not g.action_mask[column]:
            raise IllegalMove(
                f"column {column} is full (legal columns: {g.legal_columns}; see info['action_mask'])"
            )
        out = g.step(column)
        terminated = bool(out["game_over"])
        truncated = not terminated and g.moves_played >= self.max_moves
        info = self._info()
        info.update(
            waves=out["waves"],
            reveals=out["reveals"],
            cleared_board=out["cleared_board"],
            level_advanced=out["level_advanced"],
            terminal_reason=out["terminal_reason"],
        )
        return self._obs(), float(out["score_delta"]), terminated, truncated, info

    def render(self) -> Optional[str]:
        """With ``render_mode="ansi"``: a header line (score, level, next
        disc, drops to the rise) and the 7 board rows, top first ('.' empty,
        1-7 discs, '#' solid gray, '%' cracked gray: the legend of ``drop7
        show --plain``), as one str; else None.
        """
        if self.render_mode != "ansi" or self.game is None:
            return None
        g = self.game
        rows = ["".join(".1234567#%"[int(c)] for c in row) for row in g.board]
        nxt = "-" if g.next_disc is None else g.next_disc
        head = f"score {g.score}  level {g.level}  next {nxt}  drops to rise {g.moves_remaining}"
        return "\n".join([head, *rows])


class Drop7VectorEnv(VectorEnv):
    """``num_envs`` games stepped together in Rust (one call per step, no
    per-board Python work); Gymnasium's vector API with next-step autoreset.

    Observations are the batched ``Drop7Env`` observations: ``board`` int8
    ``(N, 7, 7)``, ``next_disc`` / ``moves_remaining`` / ``level`` int64
    ``(N,)`` (``next_disc`` 1, a placeholder, in the final observation of a
    game that ended) (and ``action_mask`` int8 ``(N, 7)`` with ``action_mask_in_obs``).
    ``step(actions)`` takes an integer array of shape ``(N,)`` and returns
    rewards float64 ``(N,)`` (score deltas), terminations and truncations bool
    ``(N,)``; ``info["action_mask"]`` is bool ``(N, 7)``, ``info["seed"]``
    uint32 ``(N,)``, ``info["score"]`` int64 ``(N,)``.

    Next-step autoreset: after an episode ends at step t, the action given for
    that env at step t+1 is ignored and the env starts a new game (reward 0,
    not terminated). ``reset(seed=s)`` gives env i the game of seed ``s + i``;
    the autoresets that follow take seeds ``s + N``, ``s + N + 1``, ... in env
    order. An illegal action (full column, out of range) raises
    ``IllegalMove`` before any env moves; ``step`` before the first ``reset``
    raises ``gymnasium.error.ResetNeeded``, as ``Drop7Env`` does.

    The env can be pickled and deep-copied (e.g. to checkpoint a run): the
    copy steps on exactly as the original, its games, pending autoresets
    and autoreset seeds included.
    """

    metadata = {"autoreset_mode": AutoresetMode.NEXT_STEP, "render_modes": []}

    def __init__(
        self,
        num_envs: int = 1,
        driver: str = "headless",
        max_moves: int = DEFAULT_MAX_MOVES,
        action_mask_in_obs: bool = False,
    ) -> None:
        max_moves = _check_int("max_moves", max_moves, 1, _MAX_MOVES_LIMIT)
        # The core checks num_envs (type and range, 1 to its own limit).
        self._core = VectorCore(num_envs, driver, max_moves)
        num_envs = operator.index(num_envs)
        self.num_envs = num_envs
        self.driver = driver
        self.max_moves = max_moves
        self.action_mask_in_obs = action_mask_in_obs
        self.single_observation_space = _observation_space(action_mask_in_obs)
        self.single_action_space = spaces.Discrete(7)
        self.observation_space = batch_space(self.single_observation_space, num_envs)
        self.action_space = batch_space(self.single_action_space, num_envs)
        self._np_random = None
        self._has_reset = False
        # One call at a time: `step` moves the games without the GIL, so
        # threads sharing the env take turns (each gets its own step's
        # observations, seeds and scores).
        self._lock = threading.Lock()

    def __getstate__(self) -> Dict[str, Any]:
        # A pickle or deep copy taken between two steps, not during one.
        with self._lock:
            state = self.__dict__.copy()
            state["_core"] = copy.copy(self._core)
        del state["_lock"]
        return state

    def __setstate__(self, state: Dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._lock = threading.Lock()

    def _check_open(self, call: str) -> None:
        # As Gymnasium's AsyncVectorEnv: a closed env refuses to go on.
        if self.closed:
            raise gymnasium.error.ClosedEnvironmentError(
                f"{call}() on a closed Drop7VectorEnv: make a new one")

    def _pack(self, raw) -> Tuple[Dict[str, np.ndarray], Dict[str, np.ndarray]]:
        board, next_disc, rise, level, mask = raw
        obs = {"board": board, "next_disc": next_disc, "moves_remaining": rise, "level": level}
        if self.action_mask_in_obs:
            obs["action_mask"] = mask.astype(np.int8)
        info = {"action_mask": mask}
        return obs, info

    def reset(
        self, *, seed: Optional[int] = None, options: Optional[Dict[str, Any]] = None
    ) -> Tuple[Dict[str, np.ndarray], Dict[str, np.ndarray]]:
        """Restarts every env: env ``i`` plays the game of seed ``seed + i``
        (``seed`` one integer 0..2**32-1, or None for one drawn from
        ``np_random``); later autoresets take ``seed + N``, ``seed + N + 1``,
        ... (all mod 2**32: after seed 2**32-1 comes seed 0). With a list of N seeds (Gymnasium's per-env form) env ``i`` plays
        ``seed[i]`` (a None entry: a seed drawn from ``np_random``) and
        autoresets take ``max(seed) + 1``, ``+ 2``, ... (mod 2**32 too, so
        after a list holding 2**32-1 they may repeat a seed of the list)
        ``options`` is ignored.

        Returns ``(observations, infos)``: observations a dict of arrays
        ``board`` int8 ``(N, 7, 7)``, ``next_disc`` / ``moves_remaining`` /
        ``level`` int64 ``(N,)`` (and ``action_mask`` int8 ``(N, 7)`` with
        ``action_mask_in_obs``); infos ``action_mask`` bool ``(N, 7)``,
        ``seed`` uint32 ``(N,)``, ``score`` int64 ``(N,)``. Raises TypeError
        for a non-integer seed, ValueError for one out of range or a list
        of the wrong length, ``gymnasium.error.ClosedEnvironmentError``
        after ``close()``.
        """
        self._check_open("reset")
        if isinstance(seed, (list, tuple)) or (isinstance(seed, np.ndarray) and seed.ndim == 1):
            # One seed per env (Gymnasium's list form): env i plays seed[i]
            # (None: a seed drawn from np_random).
            given = list(seed)
            if len(given) != self.num_envs:
                raise ValueError(
                    f"seed must be one integer or {self.num_envs} (one per env), got {len(given)}")
            checked = [None if s is None else _check_seed(s) for s in given]
            super().reset(seed=checked[0])
            seeds = [int(self.np_random.integers(0, _SEED_LIMIT)) if s is None else s
                     for s in checked]
            with self._lock:
                restarted = self._core.reset_each(seeds)
                seeds_now, scores = self._core.seeds, self._core.scores
        else:
            # One integer: env i plays seed + i.
            if seed is not None:
                seed = _check_seed(seed)
            super().reset(seed=seed)
            if seed is None:
                seed = int(self.np_random.integers(0, _SEED_LIMIT))
            with self._lock:
                restarted = self._core.reset(seed)
                seeds_now, scores = self._core.seeds, self._core.scores
        obs, info = self._pack(restarted)
        self._has_reset = True
        info["seed"] = seeds_now
        info["score"] = scores
        return obs, info

    def step(self, actions: Any):
        """One move in every env: ``actions`` an integer array-like of shape
        ``(N,)`` (columns 0-6; the action of an env that autoresets on this
        step is ignored).

        Returns ``(observations, rewards, terminations, truncations,
        infos)``: observations and infos as ``reset`` gives them, rewards
        float64 ``(N,)`` (score deltas, 0 for an autoreset env),
        terminations and truncations bool ``(N,)``.

        Raises ``IllegalMove`` (a ValueError) before any env moves when an
        action is out of range or a full column, TypeError for a non-integer
        dtype, ValueError for a wrong shape or a restored game whose
        counters are at their limit, ``gymnasium.error.ResetNeeded``
        before the first ``reset``, ``gymnasium.error.ClosedEnvironmentError``
        after ``close()``. Threads sharing the env take turns: a
        ``step``, ``reset`` or pickle waits for the one running (the games
        move without the GIL).
        """
        self._check_open("step")
        if not self._has_reset:
            # As the single env (and Gymnasium's OrderEnforcing wrapper).
            raise gymnasium.error.ResetNeeded("call reset() before step()")
        try:
            masked = np.ma.is_masked(np.ma.asarray(actions))
        except np.ma.MaskError:  # masked scalars in a list
            masked = True
        except Exception:  # noqa: BLE001 - not array-like: refused below
            masked = False
        if masked:
            # np.asarray would read the hidden values under the mask.
            raise ValueError("actions is a masked array with masked entries: every env needs an action")
        a = np.asarray(actions)
        if a.dtype.kind not in "iu":
            raise TypeError(f"actions must be an integer array, got dtype {a.dtype}")
        if a.shape != (self.num_envs,):
            raise ValueError(f"actions must have shape ({self.num_envs},), got {a.shape}")
        if a.dtype.kind == "u" and a.dtype.itemsize >= 8:
            # Out of range stays out of range (7) in int64: a uint64 above
            # 2**63 - 1 must not wrap to a negative column in the message.
            a64 = np.ascontiguousarray(np.minimum(a, 7), dtype=np.int64)
        else:
            a64 = np.ascontiguousarray(a, dtype=np.int64)
        try:
            with self._lock:
                raw, reward, terminated, truncated, _autoreset = self._core.step(a64)
                seeds_now, scores = self._core.seeds, self._core.scores
        except ValueError as e:
            msg = str(e)
            if re.match(r"env \d+: ", msg):
                # A restored game that cannot move on (over, or counters at
                # their limit): no bad action, a plain ValueError.
                raise ValueError(msg) from None
            m = re.match(r"actions\[(\d+)\] = -?\d+", msg)
            if m:  # name the action as given, not its clipped copy
                i = int(m.group(1))
                msg = f"actions[{i}] = {a[i]}" + msg[m.end():]
            raise IllegalMove(msg) from None
        obs, info = self._pack(raw)
        info["seed"] = seeds_now
        info["score"] = scores
        return obs, reward, terminated, truncated, info


def register_envs() -> None:
    """Registers ``drop7/Drop7-v0`` (idempotent; done by ``import drop7``)."""
    if ENV_ID in gymnasium.registry:
        return
    gymnasium.register(
        id=ENV_ID,
        entry_point="drop7.envs:Drop7Env",
        vector_entry_point="drop7.envs:Drop7VectorEnv",
    )
