"""The import contracts of pyproject.toml ([tool.importlinter]): layers import one way, the
runtime kernels and the rewriter stay free of the analyses, no package has an import cycle."""

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def test_the_import_contracts_hold():
    lint = shutil.which("lint-imports", path=str(Path(sys.executable).parent))
    if lint is None:
        pytest.fail("lint-imports is not installed: `make setup` installs import-linter from requirements.lock")
    done = subprocess.run([lint], cwd=ROOT, capture_output=True, text=True)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    assert "5 kept, 0 broken" in done.stdout


def test_importing_the_rewriter_does_not_load_clingo():
    code = "import sys, adopter.rewrite.patch, adopter.rewrite.guarded; print('clingo' in sys.modules)"
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "False"
