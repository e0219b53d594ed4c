"""drop7.Game pickled and copied: the same state and the same randomness to
come (identical outcomes for the same columns), and clear errors for a
corrupt pickled state."""

import copy
import pickle
import random

import gymnasium
import numpy as np
import pytest

import drop7
from drop7._drop7 import _restore_game

DRIVERS = ("headless", "stream")
PROTOCOLS = range(2, pickle.HIGHEST_PROTOCOL + 1)


def _fields(g):
    return (
        g.board_string, g.next_disc, g.moves_remaining, g.game_over, g.score, g.level,
        g.moves_played, g.seed, g.driver, g.terminal_reason, g.legal_columns, repr(g),
    )


def _play_alive(g, rnd, moves):
    """Up to ``moves`` random legal moves, avoiding a move that would end the
    game (tried on a copy) while another column keeps it going."""
    for _ in range(moves):
        cols = g.legal_columns
        rnd.shuffle(cols)
        for c in cols:
            if not g.copy().step(c)["game_over"]:
                g.step(c)
                break
        else:
            break
    assert not g.game_over
    return g


def _assert_same_future(a, b, seed):
    """Plays both games to the end with the same random columns: every
    outcome dict and the state after it are equal."""
    assert _fields(a) == _fields(b)
    rnd = random.Random(seed)
    while not a.game_over:
        c = rnd.choice(a.legal_columns)
        assert a.step(c) == b.step(c)
        assert _fields(a) == _fields(b)
    assert b.game_over and b.terminal_reason == a.terminal_reason


def _games(driver):
    """(label, game): the opening, mid-game, from_board, a finished game."""
    yield "opening", drop7.Game(5, driver)
    mid = _play_alive(drop7.Game(9, driver), random.Random(1), 30)
    assert mid.moves_played >= 15 and mid.level >= 3  # past rises and reveals
    yield "mid-game", mid
    board = np.zeros((7, 7), np.int8)
    board[6] = 8
    board[5] = [9, 8, 0, 3, 0, 8, 9]
    board[4, 3] = 7
    yield "from_board", drop7.Game.from_board(
        board, 4, 2, score=1234, level=3, moves_played=17, seed=77, driver=driver
    )
    done = drop7.Game(3, driver)
    rnd = random.Random(2)
    while not done.game_over:
        done.step(rnd.choice(done.legal_columns))
    yield "finished", done


@pytest.mark.parametrize("driver", DRIVERS)
def test_pickle_round_trip_plays_on_identically(driver):
    for label, g in _games(driver):
        for proto in PROTOCOLS:
            h = pickle.loads(pickle.dumps(g, protocol=proto))
            assert type(h) is drop7.Game, label
            assert h is not g
            assert _fields(h) == _fields(g), (label, proto)
            np.testing.assert_array_equal(h.board, g.board)
            np.testing.assert_array_equal(h.action_mask, g.action_mask)
            assert h.position() == g.position()
        # Playing on: the same outcomes, the original untouched by the copy.
        before = _fields(g)
        h = pickle.loads(pickle.dumps(g))
        _assert_same_future(g.copy(), h, seed=len(label))
        assert _fields(g) == before


@pytest.mark.parametrize("driver", DRIVERS)
def test_pickle_mid_stream_carries_the_randomness(driver):
    """A pickle taken after reveals and rises continues the same draws: the
    whole rest of the game matches the unpickled twin, pickled again at
    every move."""
    g = _play_alive(drop7.Game(21, driver), random.Random(4), 30)
    twin = g.copy()
    rnd = random.Random(8)
    while not g.game_over:
        twin = pickle.loads(pickle.dumps(twin))
        c = rnd.choice(g.legal_columns)
        assert g.step(c) == twin.step(c)
    assert _fields(g) == _fields(twin)


def test_unpickled_from_board_game_keeps_a_pending_pop():
    """A from_board position may hold poppers (they pop on the next move);
    the unpickled game pops them the same way."""
    board = "0" * 35 + "0001000" + "8889888"  # the lone 1 pops
    for driver in DRIVERS:
        g = drop7.Game.from_board(board, 2, seed=3, driver=driver)
        h = pickle.loads(pickle.dumps(g))
        a, b = g.copy(), h
        out = a.step(0)
        assert out["waves"] and out == b.step(0)
        _assert_same_future(a, b, seed=3)


@pytest.mark.parametrize("driver", DRIVERS)
def test_copy_and_deepcopy_are_exact(driver):
    g = _play_alive(drop7.Game(13, driver), random.Random(3), 25)
    for h in (copy.copy(g), copy.deepcopy(g), g.copy(), copy.deepcopy([g])[0]):
        assert h is not g
        _assert_same_future(g.copy(), h, seed=5)
    assert g.__reduce__()[0] is _restore_game


def test_state_is_plain_python_values():
    g = drop7.Game(5, "stream")
    g.step(3)
    restore, (state,) = g.__reduce__()
    assert restore is _restore_game and isinstance(state, tuple)
    assert state[0] == 1  # the format version
    assert all(v is None or type(v) in (int, str) for v in state)
    assert len(state) == 11
    h = _restore_game(state)
    assert _fields(h) == _fields(g)
    # The headless driver carries no stream state.
    assert drop7.Game(5).__reduce__()[1][0][-1] is None


def test_the_stream_state_carries_the_randomness():
    """A stream game restored with its seed as the stream state (a restart
    of the stream) plays differently: the pickled state is what keeps the
    draws to come."""
    g = drop7.Game(9, "stream")
    for c in (3, 3, 2, 4, 1):
        g.step(c)
    state = list(g.__reduce__()[1][0])
    assert state[-1] != g.seed
    state[-1] = g.seed
    a, b = g.copy(), _restore_game(tuple(state))
    rnd = random.Random(0)
    outcomes = []
    while not a.game_over:
        c = rnd.choice(a.legal_columns)
        outcomes.append(a.step(c) == b.step(c))
    assert not all(outcomes)


def _state(base_driver="headless", **changes):
    """A valid state tuple (seed 5, one move) with some fields changed."""
    g = drop7.Game(5, base_driver)
    g.step(3)
    state = list(g.__reduce__()[1][0])
    names = ["version", "board", "next_disc", "moves_remaining", "score", "level",
             "moves_played", "seed", "driver", "terminal_reason", "stream_state"]
    for k, v in changes.items():
        state[names.index(k)] = v
    return tuple(state)


@pytest.mark.parametrize(
    "state, error, match",
    [
        ([1, "0" * 49], TypeError, "must be a tuple"),
        ("state", TypeError, "must be a tuple"),
        (None, TypeError, "must be a tuple"),
        ((), ValueError, "empty"),
        ((2,) + _state()[1:], ValueError, "version 2 is not supported"),
        (("1",) + _state()[1:], TypeError, "version"),
        (_state()[:-1], ValueError, "must have 11 items, got 10"),
        (_state() + (0,), ValueError, "must have 11 items, got 12"),
        (_state(board="0" * 48), ValueError, "board"),
        (_state(board="0" * 50), ValueError, "board"),
        (_state(board=b"0" * 49), TypeError, r"board\) must be a str"),
        (_state(board=12), TypeError, r"board\) must be a str"),
        (_state(board="0" * 42 + "888888a"), ValueError, "board"),
        (_state(board="1" + "0" * 48), ValueError, "board"),  # a floating disc
        (_state(next_disc=0), ValueError, "next_disc"),
        (_state(next_disc=8), ValueError, "next_disc"),
        (_state(next_disc=3.0), TypeError, "next_disc"),
        (_state(next_disc=True), TypeError, "next_disc"),
        (_state(moves_remaining=6), ValueError, "moves_remaining"),
        (_state(moves_remaining=-1), ValueError, "moves_remaining"),
        (_state(moves_remaining=0), ValueError, "moves_remaining 1-5"),
        (_state(score=-1), ValueError, "score"),
        (_state(score=2**64), ValueError, "score"),
        (_state(level=0), ValueError, "level"),
        (_state(level=2**32), ValueError, "level"),
        (_state(moves_played=-1), ValueError, "moves_played"),
        (_state(seed=2**32), ValueError, "seed"),
        (_state(seed="5"), TypeError, "seed"),
        (_state(driver="nope"), ValueError, r'^Game state field 8 \(driver\): unknown driver "nope" \(expected'),
        (_state(terminal_reason="blocked-rise", moves_remaining=0), ValueError, "top row"),
        (_state(driver=None), TypeError, r"driver\) must be a str"),
        (_state(terminal_reason="won"), ValueError, "unknown terminal reason"),
        (_state(terminal_reason=1), TypeError, "terminal_reason"),
        (_state(terminal_reason="blocked-rise"), ValueError, "moves_remaining 0"),
        (_state(terminal_reason="no-legal-column"), ValueError, "full board"),
        (_state(board="1234567" * 6 + "8888888"), ValueError, "legal column"),
        (_state(stream_state=7), ValueError, "None for the headless driver"),
        (_state("stream", stream_state=None), ValueError, "for the stream driver"),
        (_state("stream", stream_state=-1), ValueError, "stream_state"),
        (_state("stream", stream_state=2**32), ValueError, "stream_state"),
        (_state("stream", stream_state="1"), TypeError, "stream_state"),
    ],
)
def test_corrupt_state_raises(state, error, match):
    with pytest.raises(error, match=match):
        _restore_game(state)


def test_corrupt_pickle_raises_on_load():
    data = pickle.dumps(drop7.Game(1))
    bad = data.replace(b"headless", b"headlesz")
    assert bad != data
    with pytest.raises(ValueError, match="unknown driver"):
        pickle.loads(bad)


def test_restore_accepts_every_reachable_end():
    """Both terminal reasons and the extreme counters restore."""
    full = "1234567" * 6 + "8888888"
    g = drop7.Game.from_board(full, 3)
    assert g.terminal_reason == "no-legal-column"
    h = pickle.loads(pickle.dumps(g))
    assert _fields(h) == _fields(g) and h.game_over
    state = _state("stream", score=2**64 - 1, level=2**32 - 1, moves_played=2**32 - 1,
                   seed=2**32 - 1, stream_state=2**32 - 1)
    h = _restore_game(state)
    assert (h.score, h.level, h.moves_played, h.seed) == (2**64 - 1, 2**32 - 1, 2**32 - 1,
                                                          2**32 - 1)
    with pytest.raises(ValueError, match="limit"):
        h.step(h.legal_columns[0])  # the counters refuse to wrap, as before
    # The score alone at its limit refuses too (a u64 sum would wrap).
    h = _restore_game(_state(score=2**64 - 1))
    with pytest.raises(ValueError, match=r"limit .*score 18446744073709551615"):
        h.step(h.legal_columns[0])
    assert h.score == 2**64 - 1 and h.moves_played == _restore_game(_state()).moves_played


@pytest.mark.parametrize("driver", DRIVERS)
def test_gymnasium_env_pickles_after_reset(driver):
    env = gymnasium.make("drop7/Drop7-v0", driver=driver)
    env.reset(seed=11)
    for c in (3, 3, 2):
        env.step(c)
    twin = pickle.loads(pickle.dumps(env))
    rnd = random.Random(6)
    for _ in range(40):
        c = rnd.choice(env.unwrapped.game.legal_columns)
        a, b = env.step(c), twin.step(c)
        for key in a[0]:
            np.testing.assert_array_equal(a[0][key], b[0][key])
        assert a[1:4] == b[1:4]
        if a[2] or a[3]:
            break
    env.close()
    twin.close()


def _assert_same_step(a, b):
    for key in a[0]:
        np.testing.assert_array_equal(a[0][key], b[0][key])
    for x, y in zip(a[1:4], b[1:4]):
        np.testing.assert_array_equal(x, y)
    for key in ("action_mask", "seed", "score"):
        np.testing.assert_array_equal(a[4][key], b[4][key])


@pytest.mark.parametrize("driver", DRIVERS)
def test_vector_env_pickles_and_steps_on_identically(driver):
    """A Drop7VectorEnv pickled (or deep-copied) mid-run, with games that
    ended and await their autoreset, steps on exactly as the original:
    same boards, rewards, ends, autoreset seeds."""
    env = drop7.Drop7VectorEnv(num_envs=5, driver=driver, max_moves=12, action_mask_in_obs=True)
    obs, info = env.reset(seed=40)
    rnd = np.random.default_rng(3)

    def actions(info):
        mask = info["action_mask"]
        return np.array([rnd.choice(np.flatnonzero(m)) if m.any() else 0 for m in mask])

    pending = False
    for _ in range(30):
        obs, r, term, trunc, info = env.step(actions(info))
        if (term | trunc).any():
            pending = True
            break
    assert pending, "some env should end within 30 moves (max_moves 12)"
    twins = [pickle.loads(pickle.dumps(env, protocol=p)) for p in PROTOCOLS]
    twins.append(copy.deepcopy(env))
    for _ in range(40):
        acts = actions(info)
        a = env.step(acts)
        for t in twins:
            _assert_same_step(a, t.step(acts))
        info = a[4]


def test_vector_state_errors_name_the_field():
    from drop7._drop7 import _restore_vector

    env = drop7.Drop7VectorEnv(num_envs=2)
    env.reset(seed=1)
    _, (state,) = env._core.__reduce__()
    assert state[0] == 1 and state[1] == "headless" and len(state[5]) == 2
    bad = [
        ((0,), ValueError, r"6 fields"),
        ((2, *state[1:]), ValueError, r"version 2 is not supported"),
        ((1, "warp", *state[2:]), ValueError, r"driver"),
        ((*state[:2], 0, *state[3:]), ValueError, r"field 2 \(max_moves\)"),
        ((*state[:4], [False], state[5]), ValueError, r"2 games and 1 pending_reset"),
        ((*state[:5], "x"), TypeError, r"field 5 \(games\) must be a list"),
        ((*state[:5], [state[5][0], (1, "9" * 48)]), ValueError, r"game 1: "),
        ((*state[:5], [state[5][0], drop7.Game(3, driver="stream").__reduce__()[1][0]]),
         ValueError, r"game 1: driver \"stream\""),
    ]
    for st, exc, msg in bad:
        with pytest.raises(exc, match=msg):
            _restore_vector(st)
    with pytest.raises(TypeError, match="must be a tuple"):
        _restore_vector([1])


def test_vector_state_of_a_finished_game_not_marked_for_reset_is_refused():
    """A finished game always waits for its autoreset; a state that says
    otherwise (hand-made or corrupt) is refused on load, not a panic in
    `step` after other envs moved."""
    from drop7._drop7 import _restore_vector

    g = drop7.Game(1)
    while not g.game_over:
        g.step(g.legal_columns[0])
    finished = g.__reduce__()[1][0]
    fresh = drop7.Game(2).__reduce__()[1][0]
    with pytest.raises(ValueError, match=r"game 1 is over but pending_reset\[1\] is False"):
        _restore_vector((1, "headless", 2000, 10, [False, False], [fresh, finished]))
    core = _restore_vector((1, "headless", 2000, 10, [False, True], [fresh, finished]))
    core.step(np.array([3, 1]))


@pytest.mark.parametrize("field,value", [(4, 2**64 - 1), (5, 2**32 - 1), (6, 2**32 - 1)])
def test_vector_step_refuses_counters_at_their_limit(field, value):
    """As `Game.step` does: a restored game whose score, level or
    moves_played cannot count on is refused before any env moves."""
    from drop7._drop7 import _restore_vector

    fresh = drop7.Game(2).__reduce__()[1][0]
    limit = list(drop7.Game(3).__reduce__()[1][0])
    limit[field] = value
    core = _restore_vector((1, "headless", 2**32 - 1, 10, [False, False], [fresh, tuple(limit)]))
    before = core.moves_played.copy()
    with pytest.raises(ValueError, match=r"env 1: the game's counters are at their limit"):
        core.step(np.array([3, 3]))
    assert (core.moves_played == before).all()
    # Through the env: a plain ValueError, not an IllegalMove (no bad action).
    env = drop7.Drop7VectorEnv(num_envs=2)
    env.reset(seed=0)
    env._core = core
    with pytest.raises(ValueError, match=r"env 1: the game's counters") as e:
        env.step(np.array([3, 3]))
    assert not isinstance(e.value, drop7.IllegalMove)
