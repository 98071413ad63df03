"""Shared test helpers: analyse a snippet of model code, find the zoo."""

from __future__ import annotations

import os
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# one result cache per checkout, kept between runs (its keys hash the file and all of
# Adopter's code, so a change misses it): the tests that test a cold run pass no cache.
# Set before adopter modules are imported; not the user's cache, which tests must not fill.
os.environ.setdefault("ADOPTER_CACHE", str(ROOT / "build" / "test-cache"))

import pytest

from adopter.matches.structures import model_structures
from adopter.datalog.engine import solve
from adopter.extract.python_facts import extract_source

ZOO = ROOT / "hf_models"


def facts_of(code: str, path: str = "snippet.py"):
    return extract_source(textwrap.dedent(code), path)


def structures_of(code: str, class_name: str, function: str = "forward") -> list[str]:
    """The rendered model structures of `class_name.function` in a code snippet."""
    return [s.render() for s in model_structures(facts_of(code), class_name, function)]


def relation(code: str, name: str) -> set[tuple]:
    """The atoms of one relation (arguments as text) for a code snippet."""
    model = solve(facts_of(code), keep={name})
    return {tuple(str(a).strip('"') for a in args) for args in model.get(name)}


def misbehave_for(monkeypatch, module, function: str, name: str, behaviour) -> None:
    """`module.function(task, ...)` first runs `behaviour()` for the file called `name` (its
    first argument a path or a task with one; the forks of a run inherit the patch): a crash,
    a hang or a memory hog in one file's analysis or rewrite."""
    real = getattr(module, function)

    def patched(task, *args, **kwargs):
        path = getattr(task, "path", task)
        if Path(path).name == name:
            behaviour()
        return real(task, *args, **kwargs)

    monkeypatch.setattr(module, function, patched)


def process_alive(pid: int) -> bool:
    """Whether a process runs (a zombie, dead but not yet reaped, does not)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except (OSError, IndexError):
        return False


def assert_golden(actual: str, golden: Path) -> None:
    """`actual` equals the golden file. With ADOPTER_UPDATE_GOLDEN=1 a differing golden file is
    rewritten and the test still fails, so that a run which updates never passes unread."""
    if os.environ.get("ADOPTER_UPDATE_GOLDEN") and (not golden.exists() or golden.read_text() != actual):
        golden.write_text(actual)
        pytest.fail(f"{golden.name} rewritten (ADOPTER_UPDATE_GOLDEN): review `git diff`, then run again without it")
    assert actual == golden.read_text()


@pytest.fixture(scope="session")
def zoo() -> Path:
    """The model zoo; CI sets ADOPTER_REQUIRE_ZOO=1 so that a missing zoo fails, not skips."""
    if not (ZOO / "modeling_bert.py").exists():
        if os.environ.get("ADOPTER_REQUIRE_ZOO"):
            pytest.fail("hf_models/ is missing: run `make zoo`")
        pytest.skip("hf_models/ is missing: run `make zoo`")
    return ZOO


MODERN = ROOT / "modern_models"


@pytest.fixture(scope="session")
def modern_sample() -> list[Path]:
    """The 66 files of the modern sample (evaluation/modern/sample.tsv), fetched by `make
    zoo-modern`; with ADOPTER_REQUIRE_ZOO=1 (CI) a missing corpus fails, not skips."""
    rows = [line.split("\t") for line in (ROOT / "evaluation" / "modern" / "sample.tsv").read_text().splitlines()[1:]]
    files = [MODERN / corpus / path for corpus, path, _lines in rows]
    if not all(f.exists() for f in files):
        if os.environ.get("ADOPTER_REQUIRE_ZOO"):
            pytest.fail("modern_models/ is missing: run `make zoo-modern`")
        pytest.skip("modern_models/ is missing: run `make zoo-modern`")
    return files
