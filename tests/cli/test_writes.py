"""What Adopter writes: patched files keep their mode, owner and encoding, read-only files
are refused, symlinks are written through, one file that cannot be written does not stop
the others, and every output error is one line with exit status 2."""

from __future__ import annotations

import os
import stat
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

from adopter.support import atomic
from adopter.support.atomic import TEMP_SUFFIX, atomic_write_text
from adopter.cli.app import app

SELF_OUTPUT = ("from torch import nn\n\n\nclass SelfOutput(nn.Module):\n    def __init__(self, d):\n"
               "        super().__init__()\n        self.dense = nn.Linear(d, d)\n        self.LayerNorm = nn.LayerNorm(d, eps=1e-12)\n"
               "        self.dropout = nn.Dropout(0.1)\n\n    def forward(self, h, r):\n        h = self.dense(h)\n"
               "        h = self.dropout(h)\n        h = self.LayerNorm(h + r)\n        return h\n")
PATCHED = "h = self.fused_dropout_add_layer_norm(h, r)"


def run(*args):
    return CliRunner().invoke(app, list(map(str, args)))


def apply_write(*paths, extra=()):
    return run("apply", *paths, "--rules", "dropout_layernorm", "--kernels", "paper", "--write", "-j", "1", *extra)


def test_write_keeps_mode_and_owner_of_the_file_and_its_backup(tmp_path):
    model = tmp_path / "model.py"
    model.write_text(SELF_OUTPUT)
    model.chmod(0o664)
    owner = (os.getuid(), os.getgid())
    if os.getuid() == 0:  # root can hand the file to someone else, as a shared checkout has it
        owner = (1234, 4321)
        os.chown(model, *owner)
    result = apply_write(model, extra=["--backup"])
    assert result.exit_code == 0, result.output
    for path in (model, tmp_path / "model.py.orig"):
        info = path.stat()
        assert stat.S_IMODE(info.st_mode) == 0o664 and (info.st_uid, info.st_gid) == owner, path
    assert PATCHED in model.read_text() and (tmp_path / "model.py.orig").read_text() == SELF_OUTPUT


def test_a_read_only_file_is_refused_and_the_others_are_written(tmp_path):
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    locked, free = tmp_path / "a" / "model.py", tmp_path / "b" / "model.py"
    for path in (locked, free):
        path.write_text(SELF_OUTPUT)
    locked.chmod(0o444)
    result = apply_write(locked, free)
    assert result.exit_code == 1
    assert f"{locked}: error: not written: read-only file, not replaced" in result.stderr
    assert "Traceback" not in result.output
    assert locked.read_text() == SELF_OUTPUT and not (tmp_path / "a" / "model.py.orig").exists()
    assert PATCHED in free.read_text()


def test_a_symlink_is_written_through(tmp_path):
    real = tmp_path / "real.py"
    real.write_text(SELF_OUTPUT)
    link = tmp_path / "link.py"
    link.symlink_to(real)
    result = apply_write(link)
    assert result.exit_code == 0, result.output
    assert link.is_symlink() and os.readlink(link) == str(real)
    assert PATCHED in real.read_text()


def test_a_folder_that_cannot_be_written_is_one_diagnostic(tmp_path, monkeypatch):
    """(As root, a read-only folder is still writable: the refusal is simulated where the
    write makes its temporary file.)"""
    (tmp_path / "locked").mkdir()
    (tmp_path / "open").mkdir()
    for folder in ("locked", "open"):
        (tmp_path / folder / "model.py").write_text(SELF_OUTPUT)
    real_mkstemp = atomic.tempfile.mkstemp

    def mkstemp(*args, dir=None, **kwargs):
        if Path(dir).name == "locked":
            raise PermissionError(13, "Permission denied", str(dir))
        return real_mkstemp(*args, dir=dir, **kwargs)

    monkeypatch.setattr(atomic.tempfile, "mkstemp", mkstemp)
    result = apply_write(tmp_path / "locked" / "model.py", tmp_path / "open" / "model.py", extra=["--no-backup"])
    assert result.exit_code == 1 and "Traceback" not in result.output
    assert result.stderr.count("error:") == 1 and "locked/model.py: error: not written: Permission denied" in result.stderr
    assert PATCHED in (tmp_path / "open" / "model.py").read_text()
    assert (tmp_path / "locked" / "model.py").read_text() == SELF_OUTPUT


def test_an_interrupted_write_says_which_files_were_written(tmp_path, monkeypatch):
    from adopter.api import apply

    paths = [tmp_path / f"m{i}.py" for i in range(3)]
    for path in paths:
        path.write_text(SELF_OUTPUT)
    real = apply.write_in_place
    calls = []

    def write_then_interrupt(patch, backup):
        calls.append(patch.path)
        if len(calls) == 2:
            raise KeyboardInterrupt
        real(patch, backup)

    monkeypatch.setattr(apply, "write_in_place", write_then_interrupt)
    result = apply_write(*paths)
    assert result.exit_code == 130
    assert f"interrupted: 1 files written:\n  {paths[0]}\n" in result.stderr


def test_encoding_and_byte_order_mark_are_kept(tmp_path):
    latin = tmp_path / "latin.py"
    latin.write_bytes(b"# -*- coding: latin-1 -*-\n# caf\xe9\n" + SELF_OUTPUT.encode())
    bom = tmp_path / "bom.py"
    bom.write_bytes(b"\xef\xbb\xbf" + SELF_OUTPUT.encode())
    result = apply_write(latin, bom, extra=["--no-backup"])
    assert result.exit_code == 0, result.output
    assert latin.read_bytes().startswith(b"# -*- coding: latin-1 -*-\n# caf\xe9\n") and PATCHED in latin.read_text("latin-1")
    assert bom.read_bytes().startswith(b"\xef\xbb\xbffrom ") and bom.read_bytes().count(b"\xef\xbb\xbf") == 1
    assert PATCHED in bom.read_text("utf-8-sig")


def test_a_new_file_gets_the_default_mode_not_mkstemps_0600(tmp_path):
    umask = os.umask(0o022)
    try:
        atomic_write_text(tmp_path / "report.txt", "x")
    finally:
        os.umask(umask)
    assert stat.S_IMODE((tmp_path / "report.txt").stat().st_mode) == 0o644


def test_stale_temporary_files_of_a_killed_run_are_removed(tmp_path):
    stale = tmp_path / f".model.py.abc123{TEMP_SUFFIX}"
    fresh = tmp_path / f".model.py.def456{TEMP_SUFFIX}"
    other = tmp_path / ".someone-elses.tmp"
    for path in (stale, fresh, other):
        path.write_text("half")
    old = time.time() - 3600
    os.utime(stale, (old, old))
    os.utime(other, (old, old))
    atomic.remove_stale.__globals__["_cleaned"].discard(tmp_path)
    atomic_write_text(tmp_path / "model.py", "x")
    assert not stale.exists() and fresh.exists() and other.exists()


CODE = ("import torch.nn.functional as F\nfrom torch import nn\nclass Attn(nn.Module):\n"
        "    def forward(self, x):\n        return F.softmax(x, dim=-1)\n")


@pytest.mark.parametrize("target, reason", [
    ("{tmp}", "Is a directory"),
    ("/dev/full", "No space left on device"),
    ("/proc/adopter-test/report.txt", ""),
])
def test_scan_output_errors_are_one_line(tmp_path, target, reason):
    (tmp_path / "m.py").write_text(CODE)
    result = run("scan", tmp_path / "m.py", "--format", "jsonl", "-o", target.format(tmp=tmp_path))
    assert result.exit_code == 2, result.output
    (line,) = result.stderr.strip().splitlines()
    assert ": error: cannot write: " in line and reason in line


def test_scan_output_through_a_symlink_writes_its_target(tmp_path):
    (tmp_path / "m.py").write_text(CODE)
    report = tmp_path / "report.jsonl"
    report.write_text("old\n")
    (tmp_path / "link.jsonl").symlink_to(report)
    result = run("scan", tmp_path / "m.py", "--format", "jsonl", "-o", tmp_path / "link.jsonl")
    assert result.exit_code == 0, result.output
    assert (tmp_path / "link.jsonl").is_symlink() and report.read_text().startswith('{"rule"')


def test_facts_out_onto_a_file_is_one_line(tmp_path):
    (tmp_path / "m.py").write_text(CODE)
    (tmp_path / "taken").write_text("a file")
    result = run("facts", tmp_path / "m.py", "--out", tmp_path / "taken")
    assert result.exit_code == 2
    (line,) = result.stderr.strip().splitlines()
    assert line.startswith(f"{tmp_path / 'taken'}: error: cannot write:")


def test_a_corrupt_fact_table_is_one_line(tmp_path):
    (tmp_path / "m.py").write_text(CODE)
    assert run("facts", tmp_path / "m.py", "--out", tmp_path / "facts", "-j", "1").exit_code == 0
    (tmp_path / "facts" / "expr.tsv").write_text("file\texpr\nnot\tthe\tcolumns\tat\tall\n")
    result = run("query", "expr(E, S, K, L, C, EL, EC)", "--facts", tmp_path / "facts")
    assert result.exit_code == 2 and "Traceback" not in result.output
    (line,) = result.stderr.strip().splitlines()
    assert line.startswith(f"{tmp_path / 'facts' / 'expr.tsv'}: error: ")
