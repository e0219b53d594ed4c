"""The Gymnasium environments: drop7/Drop7-v0 and Drop7VectorEnv."""

import gymnasium
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

import drop7


@pytest.mark.parametrize("kwargs", [{}, {"action_mask_in_obs": True}, {"driver": "stream"}])
def test_check_env(kwargs):
    env = gymnasium.make("drop7/Drop7-v0", **kwargs)
    check_env(env.unwrapped, skip_render_check=True)
    obs, info = env.reset(seed=1)
    assert env.observation_space.contains(obs)
    assert obs["board"].dtype == np.int8 and obs["board"].shape == (7, 7)
    assert info["action_mask"].dtype == np.bool_ and info["action_mask"].shape == (7,)
    if kwargs.get("action_mask_in_obs"):
        assert (obs["action_mask"] == info["action_mask"]).all()


def test_a_bad_first_reset_leaves_the_env_usable_without_the_passive_checker():
    # docs/python.md: Gymnasium's passive checker (1.4.0) cannot step after
    # a failed first reset; the env itself can.
    env = gymnasium.make("drop7/Drop7-v0", disable_env_checker=True)
    with pytest.raises(ValueError, match="seed"):
        env.reset(seed=-1)
    obs, info = env.reset(seed=1)
    a = int(np.flatnonzero(info["action_mask"])[0])
    obs, r, terminated, truncated, info = env.step(a)
    assert env.observation_space.contains(obs)
    assert env.unwrapped.game.moves_played == 1
    with pytest.raises(NotImplementedError):
        drop7.Drop7VectorEnv(num_envs=2).render()


def test_episode_reward_is_score_and_truncation():
    env = gymnasium.make("drop7/Drop7-v0", render_mode="ansi")
    obs, info = env.reset(seed=9)
    total, terminated = 0.0, False
    while not terminated:
        a = int(np.flatnonzero(info["action_mask"])[0])
        obs, r, terminated, truncated, info = env.step(a)
        total += r
        assert not truncated
    assert total == info["score"] == env.unwrapped.game.score
    # The final observation is inside the space: next_disc is 1, a
    # placeholder (there is no next disc); render shows none.
    assert obs["next_disc"] == 1 and env.observation_space.contains(obs)
    assert "  next -  " in env.render()
    with pytest.raises(gymnasium.error.ResetNeeded):
        env.step(0)
    capped = gymnasium.make("drop7/Drop7-v0", max_moves=3)
    capped.reset(seed=9)
    for i in range(3):
        _, _, terminated, truncated, _ = capped.step(3)
    assert truncated and not terminated
    with pytest.raises(gymnasium.error.ResetNeeded):
        capped.step(3)


def test_env_bad_actions_and_seeds():
    env = gymnasium.make("drop7/Drop7-v0").unwrapped
    env.reset(seed=2)
    for bad in (7, -1):
        with pytest.raises(drop7.IllegalMove):
            env.step(bad)
    with pytest.raises(gymnasium.error.InvalidAction):
        env.step(7)
    with pytest.raises(TypeError):
        env.step(1.5)
    for _ in range(6):
        env.step(0)
        if env.game.game_over:
            break
    if not env.game.game_over and not env.game.action_mask[0]:
        with pytest.raises(ValueError, match="column 0 is full"):
            env.step(0)
    with pytest.raises(ValueError, match="seed"):
        env.reset(seed=2**32)
    with pytest.raises(ValueError):
        gymnasium.make("drop7/Drop7-v0", driver="nope")


def play_single(seed, columns_fn, moves):
    g = drop7.Game(seed)
    rewards = []
    for _ in range(moves):
        if g.game_over:
            break
        rewards.append(g.step(columns_fn(g))["score_delta"])
    return g, rewards


def test_vector_env_matches_single_games_and_autoresets():
    n = 8
    env = drop7.Drop7VectorEnv(num_envs=n, max_moves=40)
    assert env.observation_space.contains(env.reset(seed=100)[0])
    obs, info = env.reset(seed=100)
    assert list(info["seed"]) == list(range(100, 108))
    assert obs["board"].shape == (n, 7, 7) and obs["board"].dtype == np.int8
    assert info["action_mask"].shape == (n, 7) and info["action_mask"].dtype == np.bool_
    games = [drop7.Game(100 + i) for i in range(n)]
    ended = np.zeros(n, bool)
    next_seed = 100 + n
    for step in range(120):
        mask = info["action_mask"]
        actions = np.where(mask.any(1), mask.argmax(1), 0)
        obs, reward, term, trunc, info = env.step(actions)
        for i in range(n):
            if ended[i]:  # next-step autoreset: action ignored, a new game starts
                assert reward[i] == 0 and not term[i] and not trunc[i]
                games[i] = drop7.Game(next_seed)
                assert info["seed"][i] == next_seed
                next_seed += 1
            else:
                out = games[i].step(int(actions[i]))
                assert reward[i] == out["score_delta"]
                assert term[i] == out["game_over"]
                assert trunc[i] == (not out["game_over"] and games[i].moves_played == 40)
            assert (obs["board"][i] == games[i].board).all()
            # (1, a placeholder, in a finished game's last observation.)
            assert obs["next_disc"][i] == (games[i].next_disc or 1)
            assert (games[i].next_disc is None) == bool(term[i])
            assert obs["moves_remaining"][i] == games[i].moves_remaining
            assert obs["level"][i] == games[i].level
            assert (info["action_mask"][i] == games[i].action_mask).all()
        ended = term | trunc
    assert next_seed > 100 + n  # some games did end and restart


def test_vector_env_bad_input_changes_nothing():
    env = drop7.Drop7VectorEnv(num_envs=3)
    obs, info = env.reset(seed=1)
    with pytest.raises(ValueError, match=r"shape \(3,\)"):
        env.step(np.zeros(4, np.int64))
    with pytest.raises(TypeError, match="integer"):
        env.step(np.zeros(3, np.float64))
    with pytest.raises(drop7.IllegalMove, match=r"actions\[1\] = 9"):
        env.step(np.array([0, 9, 0]))
    obs2, *_ = env.step(np.array([3, 3, 3]))
    assert obs2["moves_remaining"].tolist() == [4, 4, 4]  # the bad steps did nothing
    with pytest.raises(ValueError):
        drop7.Drop7VectorEnv(num_envs=0)
    with pytest.raises(ValueError, match="seed"):
        env.reset(seed=-5)


def test_make_vec_uses_the_rust_vector_env():
    envs = gymnasium.make_vec("drop7/Drop7-v0", num_envs=4, vectorization_mode="vector_entry_point")
    assert isinstance(envs.unwrapped, drop7.Drop7VectorEnv)
    obs, info = envs.reset(seed=3)
    assert obs["board"].shape == (4, 7, 7)


def test_vector_env_step_before_reset_raises_reset_needed():
    """As Drop7Env (and Gymnasium's OrderEnforcing): no step before reset."""
    env = drop7.Drop7VectorEnv(num_envs=2)
    with pytest.raises(gymnasium.error.ResetNeeded, match=r"call reset\(\) before step\(\)"):
        env.step(np.array([3, 3]))
    single = drop7.Drop7Env()
    with pytest.raises(gymnasium.error.ResetNeeded, match=r"call reset\(\) before step\(\)"):
        single.step(3)
    env.reset(seed=1)
    obs, *_ = env.step(np.array([3, 3]))
    assert obs["moves_remaining"].tolist() == [4, 4]


def test_vector_env_refuses_to_go_on_after_close():
    """As Gymnasium's AsyncVectorEnv: a closed env neither steps nor resets;
    closing twice is harmless."""
    env = drop7.Drop7VectorEnv(num_envs=2)
    env.reset(seed=1)
    env.close()
    env.close()
    with pytest.raises(gymnasium.error.ClosedEnvironmentError, match=r"step\(\) on a closed"):
        env.step(np.array([3, 3]))
    with pytest.raises(gymnasium.error.ClosedEnvironmentError, match=r"reset\(\) on a closed"):
        env.reset(seed=1)


def test_env_integer_arguments_are_checked_by_type_and_range():
    """num_envs and max_moves: NumPy integers are integers, a bool or a float
    is a TypeError, a value out of range a ValueError naming the range (the
    vector core's 1..2**32-1 for max_moves, in both environments)."""
    assert drop7.Drop7Env(max_moves=np.int64(5)).max_moves == 5
    v = drop7.Drop7VectorEnv(num_envs=np.int32(2), max_moves=np.uint16(7))
    assert (v.num_envs, v.max_moves) == (2, 7)
    for make in (lambda m: drop7.Drop7Env(max_moves=m), lambda m: drop7.Drop7VectorEnv(2, max_moves=m)):
        with pytest.raises(TypeError, match="max_moves must be an integer, got bool"):
            make(True)
        with pytest.raises(TypeError, match="max_moves must be an integer, got float"):
            make(5.0)
        with pytest.raises(ValueError, match="max_moves must be 1-4294967295, got 0"):
            make(0)
        with pytest.raises(ValueError, match="max_moves must be 1-4294967295, got 4294967296"):
            make(2**32)
    with pytest.raises(TypeError, match="num_envs must be an integer, got float"):
        drop7.Drop7VectorEnv(num_envs=2.0)
    with pytest.raises(ValueError, match="num_envs must be 1-1048576, got 0"):
        drop7.Drop7VectorEnv(num_envs=0)


def test_vector_env_names_a_huge_unsigned_action_as_given():
    """A uint64 action above 2**63 - 1 is out of range under its own value (it
    was cast to int64 first and named as -1); an ended env still ignores it."""
    env = drop7.Drop7VectorEnv(num_envs=3, max_moves=1)
    env.reset(seed=1)
    big = np.array([0, 2**64 - 1, 0], dtype=np.uint64)
    with pytest.raises(drop7.IllegalMove, match=r"actions\[1\] = 18446744073709551615 is out of range 0-6"):
        env.step(big)
    with pytest.raises(drop7.IllegalMove, match=r"actions\[1\] = 9223372036854775808 is out of range"):
        env.step(np.array([0, 2**63, 0], dtype=np.uint64))
    obs, _, _, trunc, _ = env.step(np.array([3, 3, 3], dtype=np.uint64))
    assert trunc.all() and obs["moves_remaining"].tolist() == [4, 4, 4]
    obs, *_ = env.step(big)  # every env autoresets: the actions are ignored
    assert obs["moves_remaining"].tolist() == [5, 5, 5]


def test_ansi_render_uses_the_plain_viewer_legend():
    """render() draws '.', 1-7, '#' solid and '%' cracked gray, one row per line."""
    import gymnasium as gym

    env = gym.make("drop7/Drop7-v0", render_mode="ansi")
    env.reset(seed=1)
    text = env.render()
    lines = text.splitlines()
    assert lines[0].startswith("score 0  level 1")
    assert len(lines) == 8 and all(len(row) == 7 for row in lines[1:])
    assert set("".join(lines[1:])) <= set(".1234567#%")
    assert lines[-1] == "#######"


def test_vector_env_reset_with_one_seed_per_env():
    """Gymnasium's list form: env i plays seed[i]; autoresets continue after
    the largest; a list of the wrong length or with a bad seed changes
    nothing and names the problem."""
    env = drop7.Drop7VectorEnv(num_envs=3, max_moves=2)
    obs, info = env.reset(seed=[5, 9, np.uint32(5)])
    assert list(info["seed"]) == [5, 9, 5]
    for i, s in enumerate([5, 9, 5]):
        assert (obs["board"][i] == drop7.Game(s).board).all()
    for _ in range(3):  # two moves end every game (max_moves 2), the third autoresets
        obs, _, _, _, info = env.step(np.full(3, 3))
    assert list(info["seed"]) == [10, 11, 12]
    for bad, exc, msg in [
        ([1, 2], ValueError, r"one integer or 3 \(one per env\), got 2"),
        ([1, 2, -1], ValueError, r"seed must be in 0\.\."),
        ([1, 2, 3.5], TypeError, r"seed must be an integer"),
        (np.array(5.0), TypeError, r"seed must be an integer or None, got ndarray"),
        (np.array([[1, 2, 3]]), TypeError, r"seed must be an integer or None, got ndarray"),
    ]:
        with pytest.raises(exc, match=msg):
            env.reset(seed=bad)
    assert list(env.reset(seed=7)[1]["seed"]) == [7, 8, 9]
    # A 0-d integer array is an integer.
    assert list(env.reset(seed=np.array(7))[1]["seed"]) == [7, 8, 9]
    # None entries (as Gymnasium's vector envs take them): that env's seed
    # is drawn from np_random, the same draws for the same first seed.
    _, info = env.reset(seed=[1, None, 2])
    assert info["seed"][0] == 1 and info["seed"][2] == 2
    _, again = env.reset(seed=[1, None, 2])
    assert again["seed"][1] == info["seed"][1]
    assert len(env.reset(seed=[None, None, None])[1]["seed"]) == 3


def test_vector_env_shared_by_threads_takes_turns():
    """Two threads stepping one vector env (its step moves the games without
    the GIL) take turns: no error, and each step's info holds the seeds and
    scores of that step's games; a pickle taken meanwhile steps on as the
    env did at that point."""
    import pickle
    import threading

    env = drop7.Drop7VectorEnv(num_envs=1 << 14)
    first_mask = env.reset(seed=1)[1]["action_mask"]
    errors, copies = [], []

    def stepper():
        mask = first_mask
        for _ in range(15):
            try:
                obs, reward, term, trunc, info = env.step(np.argmax(mask, axis=1))
                mask = info["action_mask"]
                assert info["seed"].shape == (env.num_envs,)
            except drop7.IllegalMove:
                pass  # a mask the other thread's step made stale: not what is tested
            except Exception as e:  # noqa: BLE001 - any other error fails the test
                errors.append(repr(e))

    def pickler():
        for _ in range(15):
            copies.append(pickle.loads(pickle.dumps(env)))

    threads = [threading.Thread(target=stepper) for _ in range(2)] + [threading.Thread(target=pickler)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert len(copies) == 15 and all(c.num_envs == env.num_envs for c in copies)
    obs, info = env.reset(seed=2)
    assert info["seed"][0] == 2
    # A copy steps on as its original would from the same point.
    a, b = pickle.loads(pickle.dumps(env)), env
    acts = np.argmax(info["action_mask"], axis=1)
    assert (a.step(acts)[0]["board"] == b.step(acts)[0]["board"]).all()
