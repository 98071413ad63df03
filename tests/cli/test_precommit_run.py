"""`pre-commit run --all-files` with this repository's `adopter` hook, as a user's repository
configures it: pre-commit clones this checkout at its HEAD, installs it into a hook environment
of its own (from the package registry), and the hook fails on a match its `[tool.adopter]`
selects unless `# adopter: ignore` keeps it out. Slow (a fresh environment): `make test-all`."""

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from conftest import ROOT

pytestmark = pytest.mark.venv

MODEL = textwrap.dedent("""
    import torch.nn as nn
    import torch.nn.functional as F


    class M(nn.Module):
        def forward(self, x, y):
            a = F.softmax(x, dim=-1)
            b = F.softmax(y, dim=-1)  # adopter: ignore[softmax]
            return a + b
""")


def _run(args, cwd: Path, env=None) -> subprocess.CompletedProcess:
    return subprocess.run(args, cwd=cwd, capture_output=True, text=True, env=env, timeout=1200)


def test_pre_commit_runs_the_hook_from_a_fresh_environment(tmp_path):
    head = _run(["git", "rev-parse", "HEAD"], ROOT).stdout.strip()
    if _run(["git", "status", "--porcelain", "--untracked-files=no"], ROOT).stdout.strip():
        pytest.skip("the checkout has uncommitted changes: pre-commit installs the commit, not the working tree")
    tools = tmp_path / "tools"
    assert _run([sys.executable, "-m", "venv", str(tools)], tmp_path).returncode == 0
    installed = _run([str(tools / "bin" / "pip"), "install", "--quiet", "pre-commit==4.0.1"], tmp_path)
    assert installed.returncode == 0, installed.stderr[-2000:]
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "pyproject.toml").write_text('[tool.adopter]\nrules = ["softmax"]\n')
    (repo / "model.py").write_text(MODEL)
    (repo / ".pre-commit-config.yaml").write_text(
        f"repos:\n  - repo: {ROOT}\n    rev: {head}\n    hooks:\n      - id: adopter\n")
    git = ["git", "-c", "user.email=test@example.com", "-c", "user.name=test"]
    for step in (["init", "-q"], ["add", "-A"], ["commit", "-qm", "a model"]):
        assert _run(git + step, repo).returncode == 0
    env = {**os.environ, "PRE_COMMIT_HOME": str(tmp_path / "pre-commit-home")}
    env.pop("VIRTUAL_ENV", None)
    failed = _run([str(tools / "bin" / "pre-commit"), "run", "--all-files"], repo, env)
    assert failed.returncode == 1, failed.stdout[-2000:] + failed.stderr[-2000:]
    assert "adopter scan" in failed.stdout and "Failed" in failed.stdout
    assert "model.py:8  softmax" in failed.stdout and "model.py:9" not in failed.stdout
    (repo / "model.py").write_text(MODEL.replace("a = F.softmax(x, dim=-1)", "a = F.softmax(x, dim=-1)  # adopter: ignore"))
    passed = _run([str(tools / "bin" / "pre-commit"), "run", "--all-files"], repo, env)
    assert passed.returncode == 0, passed.stdout[-2000:] + passed.stderr[-2000:]
    assert "Passed" in passed.stdout
