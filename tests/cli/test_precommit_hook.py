"""The pre-commit hook (.pre-commit-hooks.yaml) run as pre-commit runs it: its entry with the
staged Python files appended, in the repository's folder; it fails where a rule matches and
passes where every match is suppressed."""

import os
import shlex
import subprocess
import sys

import yaml

from conftest import ROOT

MODEL = ("import torch.nn.functional as F\nfrom torch import nn\n\n\nclass M(nn.Module):\n"
         "    def forward(self, x):\n        return F.softmax(x, dim=-1){comment}\n")


def hook_entry(name: str = "adopter") -> list[str]:
    (hook,) = [h for h in yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text()) if h["id"] == name]
    assert (hook["language"], hook["types"]) == ("python", ["python"])
    return shlex.split(hook["entry"])


def test_the_hook_fails_on_a_match_and_passes_when_it_is_suppressed(tmp_path):
    command = hook_entry()
    assert command[0] == "adopter"
    run = [sys.executable, "-m", "adopter.cli", *command[1:]]
    (tmp_path / "pyproject.toml").write_text('[tool.adopter]\nrules = ["softmax"]\n')
    (tmp_path / "m.py").write_text(MODEL.format(comment=""))
    (tmp_path / "other.py").write_text("x = 1\n")
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    failing = subprocess.run([*run, "m.py", "other.py"], cwd=tmp_path, capture_output=True, text=True, env=env)
    assert failing.returncode == 1 and "m.py:7" in failing.stdout
    (tmp_path / "m.py").write_text(MODEL.format(comment="  # adopter: ignore[softmax]"))
    passing = subprocess.run([*run, "m.py", "other.py"], cwd=tmp_path, capture_output=True, text=True, env=env)
    assert passing.returncode == 0, passing.stdout + passing.stderr


GATE = ("import torch\nfrom torch import nn\n\n\nclass Gate(nn.Module):\n    def __init__(self, d):\n"
        "        super().__init__()\n        self.w1 = nn.Linear(d, d, bias=False)\n        self.w3 = nn.Linear(d, d, bias=False)\n\n"
        "    def forward(self, x):\n        return nn.functional.silu(self.w1(x)) * self.w3(x){comment}\n")


def test_the_apply_hook_fails_where_a_rewrite_would_change_a_file_and_writes_nothing(tmp_path):
    command = hook_entry("adopter-apply")
    assert command[:3] == ["adopter", "apply", "--check"]
    run = [sys.executable, "-m", "adopter.cli", *command[1:]]
    (tmp_path / "pyproject.toml").write_text('[tool.adopter]\nkernels = "torch"\n')
    (tmp_path / "gate.py").write_text(GATE.format(comment=""))
    (tmp_path / "other.py").write_text("x = 1\n")
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    failing = subprocess.run([*run, "gate.py", "other.py"], cwd=tmp_path, capture_output=True, text=True, env=env)
    assert failing.returncode == 1, failing.stderr
    assert "+++ b/gate.py" in failing.stdout and "adopter_kernels" in failing.stdout
    assert (tmp_path / "gate.py").read_text() == GATE.format(comment="")  # nothing written
    (tmp_path / "gate.py").write_text(GATE.format(comment="  # adopter: ignore"))
    passing = subprocess.run([*run, "gate.py", "other.py"], cwd=tmp_path, capture_output=True, text=True, env=env)
    assert passing.returncode == 0, passing.stdout + passing.stderr
