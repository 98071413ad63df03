"""Nothing a repository or another user ships runs code: the cache, the grammar, the
programs clingo reads. Each test plants what an attacker would and checks that it runs
nothing and changes nothing."""

from __future__ import annotations

import json
import os
import pickle
import random
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from adopter.support import cache as cache_module
from adopter.support.cache import entry_key
from adopter.cli.app import app
from adopter.api.scan import scan
from adopter.matches.build import rules_program
from adopter.rules.registry import bundled_rule_files, load_rules

ROOT = Path(__file__).resolve().parents[2]

CODE = """
import torch.nn.functional as F
from torch import nn
class Attn(nn.Module):
    def forward(self, x):
        if self.training:
            y = F.softmax(x, dim=-1)
        return y
"""


class _Payload:
    """A pickle that runs a shell command when loaded."""

    def __init__(self, marker: Path):
        self.marker = marker

    def __reduce__(self):
        return os.system, (f"touch {self.marker}",)


def _run(*args):
    return CliRunner().invoke(app, list(map(str, args)))


def _plant(folder: Path, key: str, marker: Path) -> None:
    (folder / key[:2]).mkdir(parents=True, exist_ok=True)
    (folder / key[:2] / key).write_bytes(pickle.dumps(_Payload(marker)))


def test_a_planted_cache_entry_runs_nothing(tmp_path, monkeypatch):
    """Pickles planted under every key a scan of the file reads, in the cache and in the
    working directory's `build/cache` (where the cache once was), are never loaded."""
    source = tmp_path / "m.py"
    source.write_text(CODE)
    marker = tmp_path / "pwned"
    monkeypatch.chdir(tmp_path)
    data = source.read_bytes()
    rules = load_rules(["softmax"], cache_dir=None)
    keys = [entry_key(data, "matches", rules_program(rules), "m.py", "full"), entry_key(data, "summary", "full"),
            entry_key(data, "facts", "m.py"), entry_key(data, "tables", "m.py")]
    keys += [entry_key(path.read_bytes(), "rule", str(path)) for path in bundled_rule_files()]
    for folder in (cache_module.DEFAULT_DIR, tmp_path / "build" / "cache"):
        for key in keys:
            _plant(folder, key, marker)
    result = _run("scan", "m.py", "--format", "jsonl", "--rules", "softmax")
    assert not marker.exists()
    assert result.exit_code == 0, result.output
    assert [json.loads(line)["line"] for line in result.stdout.splitlines()] == [7]


def test_the_cache_is_per_user_and_private_not_in_the_working_directory(tmp_path):
    """Without ADOPTER_CACHE the cache is the platform's per-user folder, created 0700."""
    (tmp_path / "m.py").write_text(CODE)
    env = {k: v for k, v in os.environ.items() if k != "ADOPTER_CACHE"}
    env["XDG_CACHE_HOME"] = str(tmp_path / "xdg")
    done = subprocess.run([sys.executable, "-m", "adopter.cli", "scan", "m.py", "--format", "jsonl", "-r", "softmax"],
                          cwd=tmp_path, env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    folder = tmp_path / "xdg" / "adopter"
    assert stat.S_IMODE(folder.stat().st_mode) == 0o700
    assert any(p.is_file() for p in folder.rglob("*")) and not (tmp_path / "build").exists()


def test_a_cache_folder_others_can_write_is_not_used(tmp_path):
    (tmp_path / "m.py").write_text(CODE)
    shared = tmp_path / "shared-cache"
    shared.mkdir()
    shared.chmod(0o777)
    env = {**os.environ, "ADOPTER_CACHE": str(shared)}
    done = subprocess.run([sys.executable, "-m", "adopter.cli", "scan", "m.py", "--format", "jsonl", "-r", "softmax"],
                          cwd=tmp_path, env=env, capture_output=True, text=True)
    assert done.returncode == 0 and len(done.stdout.splitlines()) == 1
    assert done.stderr.count("writable by other users") == 1 and list(shared.iterdir()) == []


def test_a_planted_grammar_cache_runs_nothing(tmp_path):
    """lark's `cache=True` loads a pickle from a predictable name in the shared temp folder:
    plant one there (its name and header found as lark makes them) and parse a rule."""
    import tempfile

    import lark

    from adopter.rules import dsl

    saved, tempfile.tempdir = tempfile.tempdir, str(tmp_path)
    try:
        lark.Lark(dsl._GRAMMAR, parser="lalr", propagate_positions=True, cache=True)
    finally:
        tempfile.tempdir = saved
    (planted,) = tmp_path.glob(".lark_cache_*.tmp")
    marker = tmp_path / "pwned"
    header = planted.read_bytes().split(b"\n", 1)[0]
    planted.write_bytes(header + b"\n" + pickle.dumps(_Payload(marker)))
    code = "from adopter.rules.dsl import parse_rule; parse_rule('forward: torch.nn.functional.softmax($x) -> $y => _', 'r.adopt')"
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env={**os.environ, "TMPDIR": str(tmp_path)},
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert not marker.exists()


def test_a_newline_in_a_rule_path_adds_no_program_text(tmp_path):
    """The path of a rule file never reaches the program: a folder name holding a newline and
    an `#include` compiles to the same program as a plain folder."""
    rule = (ROOT / "adopter" / "rules" / "paper" / "softmax.adopt").read_text()
    evil = tmp_path / 'x\n#include "planted.lp".\n%'
    evil.mkdir()
    (evil / "softmax.adopt").write_text(rule)
    (tmp_path / "planted.lp").write_text('cand(m("softmax", r(1), (1,), ())).\n')
    (tmp_path / "m.py").write_text(CODE)
    plain = scan([str(tmp_path / "m.py")], load_rules(["softmax"], cache_dir=None), jobs=1, cache_dir=None)
    planted = scan([str(tmp_path / "m.py")], load_rules([str(evil / "softmax.adopt")], cache_dir=None), jobs=1,
                   cache_dir=None)
    assert planted.failed == 0 and [m.location for m in planted.matches] == [m.location for m in plain.matches]


def test_a_rule_id_must_be_an_identifier(tmp_path):
    bad = tmp_path / "two\nlines.adopt"
    bad.write_text("forward: torch.nn.functional.softmax($x) -> $y => _\n")
    result = _run("rules", "show", bad, "--datalog")
    assert result.exit_code == 2 and "must be letters, digits and `_`" in result.stderr


@pytest.mark.parametrize("query, reason", [
    ('qname(E, Q). #include "{planted}"', "`#include` is not allowed"),
    ('qname(E, Q), #script (python) import os #end', "`#script` is not allowed"),
    ('qname(E, Q) % a comment', "comments (`%`) are not allowed"),
    ('qname(E, @input("qname"))', "calls into Python"),
    ('qname(E, Q). other(Q) :- qname(E, Q)', "one rule body"),
    ('qnme(E, Q)', "unknown relation `qnme` (did you mean `qname`?)"),
    ('qname(E)', "`qname` has 2 arguments, not 1"),
])
def test_a_query_is_one_checked_rule_body(tmp_path, query, reason):
    (tmp_path / "m.py").write_text(CODE)
    planted = tmp_path / "planted.lp"
    planted.write_text('qname(1, "planted").\n')
    result = _run("query", query.format(planted=planted), "--source", tmp_path / "m.py", "--format", "tsv")
    assert result.exit_code == 2 and "planted" not in result.stdout
    assert result.stderr.startswith("<query>: error: invalid query") and reason in result.stderr


def test_a_query_may_use_strings_holding_what_a_body_may_not(tmp_path):
    (tmp_path / "m.py").write_text('x = "#include % @"\n')
    result = _run("query", 'constant(E, C), C = "\'#include % @\'"', "--source", tmp_path / "m.py", "--format", "tsv")
    assert result.exit_code == 0, result.output
    assert result.stdout.splitlines()[1:] == [f"{tmp_path / 'm.py'}\t2\t'#include % @'"]


def test_flipped_bits_in_cache_entries_never_change_the_output(tmp_path):
    """Any one flipped bit in any entry is a miss (the entry's checksum), never a wrong result
    or a crash: 60 seeded trials over the entries of a scan with every bundled rule."""
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "m.py").write_text(CODE)
    pristine = tmp_path / "pristine"
    rules = load_rules(cache_dir=pristine)
    expected = [m.to_json() for m in scan([str(tmp_path / "src")], rules, jobs=1, cache_dir=pristine).matches]
    entries = sorted(p.relative_to(pristine) for p in pristine.rglob("*") if p.is_file() and not p.name.startswith("."))
    assert len(entries) > len(rules)  # the rules and the file's results
    chance = random.Random(20261123)
    for trial in range(60):
        folder = tmp_path / f"trial{trial}"
        shutil.copytree(pristine, folder)
        entry = folder / chance.choice(entries)
        data = bytearray(entry.read_bytes())
        bit = chance.randrange(len(data) * 8)
        data[bit // 8] ^= 1 << (bit % 8)
        entry.write_bytes(bytes(data))
        got = scan([str(tmp_path / "src")], load_rules(cache_dir=folder), jobs=1, cache_dir=folder)
        assert got.failed == 0 and [m.to_json() for m in got.matches] == expected, (trial, entry)


def test_a_cache_that_cannot_be_written_is_one_warning(tmp_path, monkeypatch):
    """A full disk (every write fails) costs the cache, not the results."""
    for name in ("a.py", "b.py"):
        (tmp_path / name).write_text(CODE)

    def full(*args, **kwargs):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(cache_module.tempfile, "mkstemp", full)
    result = scan([str(tmp_path)], load_rules(["softmax"], cache_dir=None), jobs=1, cache_dir=tmp_path / "cache")
    assert [m.line for m in result.matches] == [7, 7] and result.failed == 0
    (warning,) = result.diagnostics
    assert warning.severity == "warning" and "No space left on device" in warning.message
