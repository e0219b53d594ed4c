"""Runtime docstrings: every public callable and property of the package,
of drop7.Game and of the environment classes has a non-empty ``__doc__``
(``help()`` shows what ``__init__.pyi`` documents)."""

import inspect

import drop7


def _public_members(cls):
    """(name, object) of the public callables and properties a class defines
    itself (inherited Gymnasium members are documented by Gymnasium)."""
    for name, obj in vars(cls).items():
        if name.startswith("_"):
            continue
        if isinstance(obj, (staticmethod, classmethod)):
            obj = obj.__func__
        if callable(obj) or inspect.isdatadescriptor(obj):
            yield name, obj


def test_every_public_name_has_a_docstring():
    missing = []
    for name in drop7.__all__:
        obj = getattr(drop7, name)
        if isinstance(obj, (int, str)):
            continue  # constants
        if not (obj.__doc__ or "").strip():
            missing.append(name)
        if inspect.isclass(obj):
            for member, m in _public_members(obj):
                if not (m.__doc__ or "").strip():
                    missing.append(f"{name}.{member}")
    assert missing == []


def test_the_members_named_in_the_docs_are_checked():
    game = dict(_public_members(drop7.Game))
    for name in ["board", "step", "from_board", "position", "action_mask", "score", "level",
                 "legal_columns", "copy", "game_over", "terminal_reason", "seed", "driver"]:
        assert name in game, name
    for cls in (drop7.Drop7Env, drop7.Drop7VectorEnv):
        assert {"step", "reset"} <= set(dict(_public_members(cls))), cls


def test_docstrings_give_shapes_and_dtypes():
    assert "int8" in drop7.Game.board.__doc__ and "(7, 7)" in drop7.Game.board.__doc__
    assert "row 0 at the top" in drop7.Game.board.__doc__
    assert "bool" in drop7.Game.action_mask.__doc__ and "(7,)" in drop7.Game.action_mask.__doc__
    assert "(7, 7)" in drop7.Game.from_board.__doc__
    assert "(7, 7)" in drop7.decide.__doc__ and "list of 7 floats" in drop7.decide.__doc__
    assert "float" in drop7.leaf.__doc__ and "(7, 7)" in drop7.leaf.__doc__
    assert "(N, 7, 7)" in drop7.Drop7VectorEnv.reset.__doc__
    assert "(N,)" in drop7.Drop7VectorEnv.reset.__doc__
    assert "float64 ``(N,)``" in drop7.Drop7VectorEnv.step.__doc__
    assert "int8" in drop7.Drop7Env.reset.__doc__ and "(7, 7)" in drop7.Drop7Env.reset.__doc__
