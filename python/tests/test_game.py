"""drop7.Game: the engine from Python, and its bad-input errors."""

import copy

import numpy as np
import pytest

import drop7


def test_opening_and_first_move():
    g = drop7.Game(1)
    assert g.seed == 1 and g.driver == "headless"
    b = g.board
    assert b.dtype == np.int8 and b.shape == (7, 7)
    assert (b[6] == 8).all() and (b[:6] == 0).all()  # row 0 at the top
    assert g.board_string == "0" * 42 + "8" * 7
    assert g.next_disc == 5 and g.moves_remaining == 5 and g.level == 1 and g.score == 0
    assert g.legal_columns == list(range(7))
    assert g.action_mask.dtype == np.bool_ and g.action_mask.shape == (7,)
    out = g.step(3)
    assert out["disc"] == 5 and out["column"] == 3 and out["score_delta"] == 0
    assert out["waves"] == [] and out["game_over"] is False and out["terminal_reason"] is None
    assert g.board[5, 3] == 5 and g.moves_remaining == 4 and g.next_disc == 4
    assert g.moves_played == 1


def test_copy_is_independent():
    g = drop7.Game(7)
    g.step(2)
    h = g.copy()
    for c in (copy.copy(g), copy.deepcopy(g)):
        assert c.board_string == g.board_string
    h.step(3)
    assert h.moves_played == 2 and g.moves_played == 1


def test_play_to_the_end_and_step_after():
    g = drop7.Game(3)
    while not g.game_over:
        out = g.step(g.legal_columns[0])
    assert out["game_over"] and out["terminal_reason"] in ("blocked-rise", "no-legal-column")
    assert g.terminal_reason == out["terminal_reason"] and out["next_disc"] is None
    # No stale next disc once the game is over, anywhere it is shown.
    assert g.next_disc is None and g.position()["next"] is None
    assert g.position()["gameOver"] is True
    assert drop7.decide(g.position(), depth=1)["action"] is None
    assert drop7.leaf(g.position()) == drop7.leaf(g)
    assert g.legal_columns == [] and not g.action_mask.any()
    with pytest.raises(ValueError, match="game is over"):
        g.step(0)


def test_from_board_matches_the_played_game():
    g = drop7.Game(11)
    for c in (3, 3, 2, 4):
        g.step(c)
    for board in (g.board, g.board_string, g.board.astype(np.int64).tolist()):
        h = drop7.Game.from_board(
            board, g.next_disc, g.moves_remaining, score=g.score, level=g.level,
            moves_played=g.moves_played, seed=11,
        )
        assert h.board_string == g.board_string and h.score == g.score
        # The headless driver continues exactly as the game that got here.
        a, b = g.copy(), h
        for c in (0, 6, 3, 3, 3, 1):
            assert a.step(c) == b.step(c)
    assert drop7.Game.from_board(g.board, 3).moves_remaining == 5


def test_bad_input():
    g = drop7.Game(1)
    with pytest.raises(ValueError, match="out of range"):
        g.step(7)
    with pytest.raises(ValueError, match="out of range"):
        g.step(-1)
    with pytest.raises(TypeError):
        g.step(2.5)
    with pytest.raises(TypeError):
        g.step("3")
    with pytest.raises(TypeError):
        g.step(True)
    assert g.moves_played == 0
    full = np.zeros((7, 7), np.int8)
    full[:, 0] = [1, 2, 3, 4, 5, 6, 8]
    full[6, 1:] = 8
    h = drop7.Game.from_board(full, 4)
    with pytest.raises(ValueError, match="column 0 is full"):
        h.step(0)
    for bad_seed in (-1, 2**32):
        with pytest.raises(ValueError, match="seed"):
            drop7.Game(bad_seed)
    with pytest.raises(TypeError):
        drop7.Game("1")
    with pytest.raises(ValueError, match="driver"):
        drop7.Game(1, driver="latent-ish")
    with pytest.raises(ValueError, match=r"shape \(7, 7\)"):
        drop7.Game.from_board(np.zeros((6, 7), np.int8), 1)
    with pytest.raises(TypeError, match="integer dtype"):
        drop7.Game.from_board(np.zeros((7, 7), np.float32), 1)
    huge = [[0] * 7 for _ in range(7)]
    huge[6][0] = 2**70
    with pytest.raises(TypeError, match="got object .every cell must be a cell code 0-9"):
        drop7.Game.from_board(huge, 1)
    with pytest.raises(ValueError, match=r"board\[2, 3\] is 10"):
        b = np.zeros((7, 7), np.int8)
        b[2:, 3] = 10
        drop7.Game.from_board(b, 1)
    with pytest.raises(ValueError, match="bottom-packed"):
        b = np.zeros((7, 7), np.int8)
        b[3, 3] = 4
        drop7.Game.from_board(b, 1)
    with pytest.raises(ValueError, match="49 characters"):
        drop7.Game.from_board("123", 1)
    for bad_disc in (0, 8):
        with pytest.raises(ValueError, match="next_disc must be 1-7"):
            drop7.Game.from_board(full, bad_disc)
    with pytest.raises(ValueError, match="moves_remaining must be 1-5"):
        drop7.Game.from_board(full, 1, 6)


def test_integer_arguments_out_of_range_raise_value_error():
    """Every integer argument: ValueError naming it and its range, never
    OverflowError, however large or negative."""
    g = drop7.Game(1)
    with pytest.raises(ValueError, match=r"column 1180591620717411303424 is out of range 0-6"):
        g.step(2**70)
    with pytest.raises(ValueError, match=r"column -1 is out of range 0-6"):
        g.step(-1)
    cases = [
        (lambda: drop7.decide(g, max_work=-1), r"max_work must be 0-18446744073709551615, got -1"),
        (lambda: drop7.decide(g, max_work=2**64), r"max_work must be 0-"),
        (lambda: drop7.decide(g, depth=-1), r"depth must be 1-8, got -1"),
        (lambda: drop7.decide(g, strata=2**70), r"strata must be 1-32, got 1180591620717411303424"),
        (lambda: drop7.Game(-1), r"seed must be in 0..=4294967295, got -1"),
        (lambda: drop7.Game(2**70), r"seed must be in 0..=4294967295"),
        (lambda: drop7.Game.from_board(g.board, 3, score=-1), r"score must be 0-"),
        (lambda: drop7.Game.from_board(g.board, 3, level=0), r"level must be 1-2147483648, got 0"),
        (lambda: drop7.Game.from_board(g.board, 3, moves_played=-5), r"moves_played must be 0-2147483648"),
        (lambda: drop7.Game.from_board(g.board, 2**70), r"next_disc must be 1-7"),
        (lambda: drop7.play("center", [1], max_moves=-1), r"max_moves must be 1-4294967295, got -1"),
        (lambda: drop7.play("center", [1], threads=2**70), r"threads must be 0-1024"),
        (lambda: drop7.play("fair:d1s1", [1], max_work=-1), r"max_work must be 0-"),
        (lambda: drop7.play("center", [-1]), r"seeds\[0\] must be in 0..=4294967295, got -1"),
        (lambda: drop7.Drop7VectorEnv(num_envs=10**12), r"num_envs must be 1-1048576, got 1000000000000"),
        (lambda: drop7.Drop7VectorEnv(num_envs=2, max_moves=2**40), r"max_moves must be 1-4294967295"),
    ]
    for call, msg in cases:
        with pytest.raises(ValueError, match=msg):
            call()
    with pytest.raises(TypeError, match="depth must be an integer, got float"):
        drop7.decide(g, depth=2.0)
    with pytest.raises(TypeError, match="max_work must be an integer, got str"):
        drop7.decide(g, max_work="9")


def test_from_board_bounds_keep_counters_from_wrapping():
    """score, level and moves_played are bounded (2**53, 2**31, 2**31) so that
    play can never wrap them; at the bounds a move counts on exactly."""
    empty = "0" * 49
    cases = [
        (dict(score=2**64 - 2), r"score must be 0-9007199254740992, got 18446744073709551614"),
        (dict(score=2**53 + 1), r"score must be 0-9007199254740992"),
        (dict(level=2**32 - 1), r"level must be 1-2147483648, got 4294967295"),
        (dict(level=2**31 + 1), r"level must be 1-2147483648"),
        (dict(moves_played=2**32 - 1), r"moves_played must be 0-2147483648, got 4294967295"),
    ]
    for kwargs, msg in cases:
        with pytest.raises(ValueError, match=msg):
            drop7.Game.from_board(empty, 1, 1, **kwargs)
    # At the bounds: the move is counted on from them, never wrapped.
    g = drop7.Game.from_board(empty, 1, 1, score=2**53, level=2**31, moves_played=2**31)
    ref = drop7.Game.from_board(empty, 1, 1)
    out, want = g.step(3), ref.step(3)
    assert out["score_delta"] == want["score_delta"] > 0
    assert g.score == 2**53 + want["score_delta"]
    assert want["level_advanced"] and g.level == 2**31 + 1
    assert g.moves_played == 2**31 + 1
    assert g.board_string == ref.board_string


def test_board_cell_out_of_range_is_named_as_given():
    """A uint64 cell of 2**64 - 1 is named as that, not as -1 (its int64 cast)."""
    board = np.zeros((7, 7), np.uint64)
    board[2, 3] = 2**64 - 1
    with pytest.raises(ValueError, match=r"board\[2, 3\] is 18446744073709551615, expected a cell code 0-9"):
        drop7.Game.from_board(board, 1)
    with pytest.raises(ValueError, match=r"board\[2, 3\] is 18446744073709551615"):
        drop7.leaf({"board": board, "next": 1, "movesRemaining": 5})


def test_board_string_errors_say_board_once():
    """A malformed board string is named once ("board must have …"), not "board: board …"."""
    with pytest.raises(ValueError, match=r"^board must have 49 characters, got 48$"):
        drop7.Game.from_board("0" * 48, 1)
    floating = "0" * 21 + "1" + "0" * 27
    with pytest.raises(ValueError, match=r"^board column 0 is not bottom-packed"):
        drop7.Game.from_board(floating, 1)


def test_dir_lists_the_public_names_only():
    """dir(drop7) shows the package's API, not its helper imports."""
    names = dir(drop7)
    assert set(drop7.__all__) <= set(names)
    for helper in ("json", "warnings", "Any", "Iterable", "List", "Optional", "annotations"):
        assert helper not in names


def test_finished_position_is_a_root_line_for_the_cli(cli):
    """Game.position() of a finished game ("next": None) is read by
    `drop7 decide` and `drop7 leaf` as a game-over root; repr says None."""
    import json

    g = drop7.Game(3)
    while not g.game_over:
        g.step(g.legal_columns[0])
    assert "next_disc=None" in repr(g) and "game_over=True" in repr(g)
    line = json.dumps(g.position()) + "\n"
    d = json.loads(cli("decide", "--depth", "1", stdin=line))
    assert d["action"] is None and d["completedDepth"] == 0
    assert json.loads(cli("leaf", stdin=line))["value"] == drop7.leaf(g)


def test_ambiguous_or_hidden_input_is_refused():
    """Two spellings of one key, a masked board or action, bytes as seeds."""
    import numpy as np

    g = drop7.Game(1)
    pos = {"board": g.board_string, "next": 3, "next_disc": 5, "movesRemaining": 5}
    with pytest.raises(ValueError, match=r'position: both "next" and "next_disc" are given'):
        drop7.decide(pos, depth=1)
    masked = np.ma.masked_array(g.board, mask=np.ones((7, 7), bool))
    with pytest.raises(ValueError, match="board is a masked array with masked cells"):
        drop7.Game.from_board(masked, 3)
    # A masked array with nothing masked is an array.
    assert drop7.Game.from_board(np.ma.masked_array(g.board), 3).board_string == g.board_string
    env = drop7.Drop7VectorEnv(num_envs=2)
    env.reset(seed=1)
    with pytest.raises(ValueError, match="actions is a masked array with masked entries"):
        env.step(np.ma.masked_array([3, 3], mask=[False, True]))
    # Masked rows in a list, a masked next disc, a masked single-env action.
    rows = [np.ma.masked_array(r, mask=[True] * 7) for r in g.board]
    with pytest.raises(ValueError, match="board is a masked array with masked cells"):
        drop7.Game.from_board(rows, 3)
    with pytest.raises(ValueError, match="next_disc is masked"):
        drop7.Game.from_board(g.board, np.ma.masked_array(3, mask=True))
    with pytest.raises(ValueError, match=r"seeds\[0\] is masked"):
        drop7.play("center", [np.ma.masked_array(3, mask=True)])
    with pytest.raises(ValueError, match="column is masked"):
        drop7.Game(1).step(np.ma.masked_array(3, mask=True))
    with pytest.raises(ValueError, match="actions is a masked array"):
        env.step([np.ma.masked_array(3, mask=True)] * 2)
    single = drop7.Drop7Env()
    single.reset(seed=1)
    with pytest.raises(drop7.IllegalMove, match="action is masked"):
        single.step(np.ma.masked_array(3, mask=True))
    for seeds in (b"123", bytearray(b"12")):
        with pytest.raises(TypeError, match="not a string or bytes"):
            drop7.play("center", seeds)


def test_a_budget_that_completes_no_iteration_warns():
    """As `drop7 decide` warns of it: the action is the fallback column
    (center first), the values None; the warning points at the caller."""
    g = drop7.Game(1)
    with pytest.warns(UserWarning, match="max_work 0 let no iteration complete") as w:
        d = drop7.decide(g, depth=2, strata=3, max_work=0)
    assert w[0].filename == __file__
    assert d["action"] == 3 and d["values"] == [None] * 7 and d["completed_depth"] == 0


@pytest.mark.parametrize("board", [None, 7, 3.5])
def test_a_board_that_is_no_array_says_what_a_board_is(board):
    with pytest.raises(TypeError, match=r"board must be a \(7, 7\) integer array or a 49-character string, got "):
        drop7.Game.from_board(board, next_disc=3)


def test_importing_from_the_source_folder_says_why_it_fails():
    """Python started in python/ finds the source folder's drop7/ first,
    which has no compiled engine: the error says so and what to do."""
    import subprocess
    import sys
    from pathlib import Path

    source = Path(__file__).resolve().parents[1]
    if list((source / "drop7").glob("_drop7*")):
        pytest.skip("an engine was built into the source folder (maturin develop)")
    r = subprocess.run(
        [sys.executable, "-c", "import drop7"],
        cwd=source,
        capture_output=True,
        text=True,
        check=False,
    )
    assert r.returncode != 0
    last = r.stderr.strip().splitlines()[-1]
    assert last.startswith("ModuleNotFoundError: drop7's compiled engine"), r.stderr
    assert "run from another folder" in last, r.stderr
