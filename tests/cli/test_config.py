"""`[tool.adopter]` (adopter/api/config.py): found by walking up from the first path, the command
line over it, every key driving the CLI as a user would, and unknown or mistyped keys named with
their file and line."""

import json
import os
import subprocess
import sys
import textwrap

import pytest

from conftest import ROOT

MODEL = textwrap.dedent("""\
    import torch
    import torch.nn.functional as F
    from torch import nn


    class M(nn.Module):
        def forward(self, x):
            v = x.pow(2).mean(-1, keepdim=True)
            return F.softmax(x * torch.rsqrt(v + 1e-06), dim=-1)
    """)
CONFIG = textwrap.dedent("""\
    [project]
    name = "x"

    [tool.adopter]
    rules = ["softmax", "rms_norm"]
    exclude = ["third_party/"]
    per-file-ignores = {"tests/*" = ["softmax"]}
    kernels = "torch"
    """)


@pytest.fixture
def repo(tmp_path):
    for name in ("pkg/a.py", "tests/t.py", "third_party/v.py"):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(MODEL)
    (tmp_path / "pyproject.toml").write_text(CONFIG)
    return tmp_path


def adopter(*args, cwd):
    return subprocess.run([sys.executable, "-m", "adopter.cli", *args, "--no-cache"], capture_output=True, text=True,
                          cwd=cwd, env=dict(os.environ, PYTHONPATH=str(ROOT)))


def found(done):
    assert done.returncode == 0, done.stderr
    return sorted((json.loads(line)["rule"], json.loads(line)["file"]) for line in done.stdout.splitlines())


def test_the_configuration_selects_rules_excludes_and_ignores_per_file(repo):
    assert found(adopter("scan", ".", "--format", "jsonl", cwd=repo)) == [
        ("rms_norm", "pkg/a.py"), ("rms_norm", "tests/t.py"), ("softmax", "pkg/a.py")]
    # found from a folder below it, and the command line wins
    assert found(adopter("scan", "a.py", "--format", "jsonl", "--rules", "rms_norm", cwd=repo / "pkg")) == [
        ("rms_norm", "a.py")]


def test_apply_takes_the_configured_kernel_set_unless_told_otherwise(repo):
    configured = adopter("apply", "pkg/a.py", "--diff", cwd=repo)
    assert configured.returncode == 0 and "rms_normalize(x, 1e-06, dim=-1)" in configured.stdout  # torch set
    told = adopter("apply", "pkg/a.py", "--diff", "--kernels", "default", cwd=repo)
    assert told.returncode == 0 and told.stdout == ""  # the default set leaves rms_norm out


def test_ignore_and_an_adopter_toml(repo):
    (repo / "adopter.toml").write_text('ignore = ["softmax"]\n')  # nearer than pyproject's table: it wins
    assert found(adopter("scan", "pkg", "--format", "jsonl", cwd=repo)) == [("rms_norm", "pkg/a.py")]


@pytest.mark.parametrize("extra, line, message", [
    ("bogus = 1\n", 8, "unknown key 'bogus' in [tool.adopter] (known: rules, ignore, kernels, exclude, module-root, "
                       "per-file-ignores)"),
    ('rules = "softmax"\n', 8, "rules must be a list of strings"),
])
def test_a_bad_key_is_one_line_with_its_file_and_line(repo, extra, line, message):
    text = CONFIG.replace('rules = ["softmax", "rms_norm"]\n', "") + extra
    (repo / "pyproject.toml").write_text(text)
    done = adopter("scan", ".", cwd=repo)
    assert done.returncode == 2 and done.stderr == f"{repo / 'pyproject.toml'}:{line}: error: {message}\n"
    assert done.stdout == ""
