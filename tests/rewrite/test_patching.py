"""Patching without editing source (adopter/api/patching.py, `adopter run`): the named modules are
rewritten in memory as they are imported. Here with stand-ins for torch and xFormers (this
environment has neither): the paper's softmax rule rewrites `F.softmax(x, dim=-1)` to xFormers'
softmax, which the stand-in marks, so the run shows which code ran. The models on real torch are
tests/rewrite/test_patching_models.py's (venv tier)."""

import os
import subprocess
import sys
import textwrap

import pytest

from conftest import ROOT

STANDINS = {
    "torch/__init__.py": "from torch import nn\n",
    "torch/nn/__init__.py": "class Module:\n    def __call__(self, *a):\n        return self.forward(*a)\n",
    "torch/nn/functional.py": "def softmax(x, dim=None):\n    return ('torch softmax', x)\n",
    "xformers/__init__.py": "",
    "xformers/triton/__init__.py": "",
    "xformers/triton/softmax.py": "def softmax(x):\n    return ('xformers softmax', x)\n",
    "models/__init__.py": "",
    "models/attention.py": textwrap.dedent("""\
        import torch.nn.functional as F
        from torch import nn


        class Scores(nn.Module):
            def forward(self, x):
                return F.softmax(x, dim=-1)
        """),
    "models/plain.py": "def double(x):\n    return 2 * x\n",
    "main.py": textwrap.dedent("""\
        import sys
        from models.attention import Scores
        from models.plain import double
        print(Scores()(sys.argv[1]), double(2))
        """),
}


@pytest.fixture
def project(tmp_path):
    for name, text in STANDINS.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    return tmp_path


def adopter(*args, cwd):
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    return subprocess.run([sys.executable, "-m", "adopter.cli", *args], capture_output=True, text=True, cwd=cwd,
                          env=env, timeout=300)


def test_run_rewrites_the_named_modules_in_memory_and_edits_no_file(project):
    before = {p: p.read_bytes() for p in project.rglob("*.py")}
    done = adopter("run", "--patch", "models.attention", "--patch", "models.plain", "--kernels", "paper",
                   "--rules", "softmax", "--no-cache", "main.py", "scores", cwd=project)
    assert done.returncode == 0, done.stderr
    assert done.stdout == "('xformers softmax', 'scores') 4\n"  # the rewritten forward ran; the script's argument
    assert "adopter: models.attention: 1 patches, 0 matches not rewritten" in done.stderr
    assert "adopter: models.plain: not imported, or nothing to rewrite in it" in done.stderr
    assert {p: p.read_bytes() for p in project.rglob("*.py")} == before
    # no bytecode of the rewritten text is cached beside the source (it would be run as the file's)
    assert not list((project / "models" / "__pycache__").glob("attention.*.pyc"))


def test_a_module_not_named_runs_as_it_is(project):
    done = adopter("run", "--patch", "models.plain", "--kernels", "paper", "--rules", "softmax", "--no-cache",
                   "main.py", "scores", cwd=project)
    assert done.returncode == 0, done.stderr
    assert done.stdout == "('torch softmax', 'scores') 4\n"


def test_run_as_a_module_and_a_refused_match_runs_the_original(project):
    (project / "models" / "__main__.py").write_text("import sys\nfrom models.attention import Scores\n"
                                                    "print(Scores()(sys.argv[1]))\n")
    done = adopter("run", "-m", "--patch", "models.attention", "--rules", "softmax", "--no-cache", "models", "x",
                   cwd=project)
    # (the default kernel set leaves a softmax as it is: the op the code already runs)
    assert done.returncode == 0, done.stderr
    assert done.stdout == "('torch softmax', 'x')\n"
    assert "adopter: models.attention: 0 patches, 1 matches not rewritten" in done.stderr


def test_bad_requests_are_one_clear_line(project):
    unknown = adopter("run", "--patch", "models.attention", "--kernels", "cuda", "main.py", cwd=project)
    assert unknown.returncode == 2 and "unknown kernel set 'cuda'" in unknown.stderr
    from adopter.api.patching import patch
    with pytest.raises(ValueError, match="already imported, so it cannot be patched: os"):
        patch("os", rules=["softmax"])
    with pytest.raises(ValueError, match="name at least one module"):
        patch()
