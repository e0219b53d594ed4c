"""Golden trajectories replayed through Python: every move of every game in
testdata/trajectories-*.jsonl.gz (the frozen reference engines' traces),
through drop7.Game and through the Gymnasium environment."""

from itertools import groupby

import gymnasium
import pytest

import drop7
from conftest import read_jsonl_gz

FILES = [
    "trajectories-center.jsonl.gz",
    "trajectories-random.jsonl.gz",
    "trajectories-stream-center.jsonl.gz",
    "trajectories-stream-random.jsonl.gz",
]


def games(name):
    return [list(g) for _, g in groupby(read_jsonl_gz(name), key=lambda r: r["seed"])]


@pytest.mark.parametrize("name", FILES)
def test_game_replays_golden_file(name):
    moves = 0
    for game in games(name):
        g = drop7.Game(game[0]["seed"], driver=game[0]["driver"])
        for rec in game:
            assert g.next_disc == rec["disc"]
            out = g.step(rec["column"])
            where = f"{name} seed {rec['seed']} move {rec['move']}"
            assert out["score_delta"] == rec["scoreDelta"], where
            assert out["waves"] == rec["waves"], where
            assert out["cleared_board"] == rec["clearedBoard"], where
            assert out["level_advanced"] == rec["levelAdvanced"], where
            assert out["game_over"] == rec["gameOver"], where
            assert out["terminal_reason"] == rec["terminalReason"], where
            assert out["next_disc"] == rec["nextDisc"], where
            assert (g.score, g.level, g.moves_remaining) == (
                rec["score"], rec["level"], rec["movesRemaining"]), where
            assert g.board_string == rec["board"], where
            moves += 1
        assert g.game_over
    assert moves == len(read_jsonl_gz(name))


@pytest.mark.parametrize("name", ["trajectories-center.jsonl.gz", "trajectories-stream-random.jsonl.gz"])
def test_gymnasium_env_replays_golden_file(name):
    driver = "stream" if "stream" in name else "headless"
    env = gymnasium.make("drop7/Drop7-v0", driver=driver)
    for game in games(name)[:60]:
        obs, info = env.reset(seed=game[0]["seed"])
        for rec in game:
            assert obs["next_disc"] == rec["disc"]
            assert info["action_mask"][rec["column"]]
            obs, reward, terminated, truncated, info = env.step(rec["column"])
            assert reward == rec["scoreDelta"]
            assert terminated == rec["gameOver"] and not truncated
            assert "".join(str(c) for c in obs["board"].ravel()) == rec["board"]
            assert obs["moves_remaining"] == rec["movesRemaining"] and obs["level"] == rec["level"]
        assert terminated
