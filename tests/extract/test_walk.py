"""adopter/extract/walk.py: which `.py` files a folder argument gives, with and without the
default leaving-out (environments, caches, .gitignore) and with --exclude patterns."""

import subprocess
import sys

import pytest

from conftest import ROOT
from adopter.extract.sources import expand_paths
from adopter.extract.walk import Selection

TREE = {
    ".venv/pyvenv.cfg": "", ".venv/lib/torchish.py": "x = 1\n",
    "env2/pyvenv.cfg": "", "env2/site.py": "x = 1\n",        # any folder holding pyvenv.cfg is an environment
    ".git/hooks/hook.py": "x = 1\n", "pkg/__pycache__/a.py": "x = 1\n",
    ".gitignore": "build/\n/generated.py\n",
    "build/gen.py": "x = 1\n", "generated.py": "x = 1\n",
    "pkg/a.py": "x = 1\n", "pkg/generated.py": "x = 1\n",     # `/generated.py` is the top one only
    "pkg/sub/.gitignore": "skip_*.py\n", "pkg/sub/b.py": "x = 1\n", "pkg/sub/skip_me.py": "x = 1\n",
}


@pytest.fixture
def tree(tmp_path, monkeypatch):
    for name, text in TREE.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    monkeypatch.chdir(tmp_path)
    return tmp_path


def found(paths, selection=Selection()):
    files, problems = expand_paths(paths, selection)
    assert problems == []
    return [str(f) for f in files]


def test_a_folder_leaves_out_environments_caches_and_what_its_gitignores_ignore(tree):
    assert found(["."]) == ["pkg/a.py", "pkg/generated.py", "pkg/sub/b.py"]


def test_no_ignore_scans_everything_but_exclude_still_holds(tree):
    everything = found(["."], Selection(ignores=False))
    assert len(everything) == len([n for n in TREE if n.endswith(".py")])
    assert found(["."], Selection(exclude=("pkg/sub/", "generated.py"))) == ["pkg/a.py"]
    assert "pkg/sub/b.py" not in found(["."], Selection(exclude=("sub",), ignores=False))


def test_what_is_named_is_scanned(tree):
    # a file named, a folder named, and a folder whose .gitignore is above it: the ask wins
    assert found(["build/gen.py", ".venv", "build"]) == ["build/gen.py", ".venv/lib/torchish.py", "build/gen.py"]
    assert found(["pkg/sub/skip_me.py"]) == ["pkg/sub/skip_me.py"]


def test_the_cli_takes_exclude_and_no_ignore(tree):
    (tree / "pkg" / "a.py").write_text("import torch.nn.functional as F\nfrom torch import nn\n\n\nclass M(nn.Module):\n"
                                       "    def forward(self, x):\n        return F.softmax(x, dim=-1)\n")
    (tree / "build" / "gen.py").write_text((tree / "pkg" / "a.py").read_text())

    def scan(*extra, warning=""):
        done = subprocess.run([sys.executable, "-m", "adopter.cli", "scan", ".", "--rules", "softmax", "--no-cache",
                               "--format", "jsonl", *extra], capture_output=True, text=True, cwd=tree,
                              env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"})
        assert done.returncode == 0 and done.stderr == warning, done.stderr
        return sorted(line.split('"file": "')[1].split('"')[0] for line in done.stdout.splitlines())

    assert scan() == ["pkg/a.py"]
    assert scan("--no-ignore") == ["build/gen.py", "pkg/a.py"]
    assert scan("--exclude", "*.py", warning=".: warning: every Python file in it is left out (--exclude, .gitignore, "
                                             "environments; --no-ignore scans what is ignored)\n") == []


def test_the_file_api_takes_a_str_or_a_path(tree):
    from pathlib import Path
    from adopter.extract.sources import facts_of_file
    (by_str, problem), (by_path, _) = facts_of_file("pkg/a.py"), facts_of_file(Path("pkg/a.py"))
    assert problem is None and by_str.rows == by_path.rows and by_str.count() > 0
