"""The README's Python example runs as typed."""

import re

from conftest import REPO


def test_readme_python_example_runs():
    text = (REPO / "README.md").read_text()
    section = text.split("## Python package", 1)[1]
    blocks = re.findall(r"```python\n(.*?)```", section, flags=re.S)
    assert blocks, "no python example in the README's Python section"
    scope = {}
    exec(compile(blocks[0], "README.md", "exec"), scope)
    assert scope["out"]["column"] == 3 and len(scope["recs"]) == 10
    assert len(scope["df"]) == 1000 and scope["mask"].shape == (1024, 7)


def test_package_readme_example_runs():
    """python/README.md (the package's long description) runs as typed."""
    text = (REPO / "python" / "README.md").read_text()
    blocks = re.findall(r"```python\n(.*?)```", text, flags=re.S)
    assert len(blocks) == 1, "one python example in python/README.md"
    scope = {}
    exec(compile(blocks[0], "python/README.md", "exec"), scope)
    assert scope["d"]["action"] in range(7) and len(scope["d"]["values"]) == 7
    assert scope["g"].board.shape == (7, 7) and scope["venv"].num_envs == 1024
