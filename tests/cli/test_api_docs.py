"""docs/api.md's examples run, in order, in one namespace, in a fresh folder: the API as it is
documented (each example asserts what it shows)."""

import re

from conftest import ROOT


def test_the_api_documentation_examples_run(tmp_path, monkeypatch):
    text = (ROOT / "docs" / "api.md").read_text()
    blocks = re.findall(r"```python\n(.*?)```", text, re.DOTALL)
    assert len(blocks) >= 6
    monkeypatch.chdir(tmp_path)
    namespace: dict = {}
    for block in blocks:
        exec(compile(block, "docs/api.md", "exec"), namespace)  # noqa: S102 (our own documentation)
    assert (tmp_path / "model.py").is_file()
