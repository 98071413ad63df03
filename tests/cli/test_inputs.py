"""Input as Python reads it, and every problem with it reported where it cannot be mistaken:
encodings, file names that hold line breaks, folders that cannot be read, failed files in
SARIF, and the exit status of a query over a bad file."""

from __future__ import annotations

import json
import os
from pathlib import Path

from typer.testing import CliRunner

from adopter.cli.app import app

CODE = """import torch.nn.functional as F
from torch import nn
class Attn(nn.Module):
    def forward(self, x):
        return F.softmax(x, dim=-1)
"""


def run(*args):
    return CliRunner().invoke(app, list(map(str, args)))


def scan_lines(*paths, fmt="jsonl"):
    result = run("scan", *paths, "--format", fmt, "-r", "softmax", "-j", "1")
    return result, [json.loads(line) for line in result.stdout.splitlines()] if fmt == "jsonl" else []


def test_a_byte_order_mark_and_a_coding_line_are_read_as_python_reads_them(tmp_path):
    (tmp_path / "bom.py").write_bytes(b"\xef\xbb\xbf" + CODE.encode())
    (tmp_path / "latin.py").write_bytes(b"# -*- coding: latin-1 -*-\n# caf\xe9\n" + CODE.encode())
    result, records = scan_lines(tmp_path / "bom.py", tmp_path / "latin.py")
    assert result.exit_code == 0, result.output
    assert sorted((Path(r["file"]).name, r["line"]) for r in records) == [("bom.py", 5), ("latin.py", 7)]


def test_an_unknown_coding_is_one_diagnostic(tmp_path):
    (tmp_path / "odd.py").write_bytes(b"# coding: no-such-codec\nx = 1\n")
    result, _ = scan_lines(tmp_path / "odd.py")
    assert result.exit_code == 1
    assert result.stderr.strip() == f"{tmp_path / 'odd.py'}: error: cannot decode: unknown encoding: no-such-codec"


def test_a_line_break_in_a_file_name_cannot_forge_a_diagnostic(tmp_path):
    name = tmp_path / "a\nb.py: error: forged.py"
    name.write_text("def f(:\n")
    result, _ = scan_lines(tmp_path)
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(json.dumps(str(name)) + ":1:")


def test_sarif_uris_are_percent_encoded(tmp_path):
    (tmp_path / "my model#1.py").write_text(CODE)
    result, _ = scan_lines(tmp_path / "my model#1.py", fmt="sarif")
    log = json.loads(result.stdout)
    uri = log["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
    assert uri == (tmp_path / "my model#1.py").as_uri() and "%20" in uri and "%231" in uri


def test_sarif_records_failed_files_as_notifications(tmp_path):
    (tmp_path / "good.py").write_text(CODE)
    (tmp_path / "bad.py").write_text("def f(:\n")
    result, _ = scan_lines(tmp_path, fmt="sarif")
    assert result.exit_code == 1
    (invocation,) = json.loads(result.stdout)["runs"][0]["invocations"]
    assert invocation["executionSuccessful"] is False
    (note,) = invocation["toolExecutionNotifications"]
    assert note["level"] == "error" and note["message"]["text"].startswith("syntax error")
    location = note["locations"][0]["physicalLocation"]
    assert location["artifactLocation"]["uri"] == (tmp_path / "bad.py").as_uri() and location["region"]["startLine"] == 1


def test_folders_that_cannot_be_read_are_reported(tmp_path, monkeypatch):
    """(Root reads any folder, so the refusal is simulated where the folder is listed.)"""
    (tmp_path / "top" / "secret").mkdir(parents=True)
    (tmp_path / "top" / "m.py").write_text(CODE)
    (tmp_path / "locked").mkdir()
    real = os.scandir

    def scandir(path="."):
        if Path(path).name in ("secret", "locked"):
            raise PermissionError(13, "Permission denied", str(path))
        return real(path)

    monkeypatch.setattr(os, "scandir", scandir)
    result, records = scan_lines(tmp_path / "top", tmp_path / "locked")
    assert result.exit_code == 1 and len(records) == 1
    assert f"{tmp_path / 'top' / 'secret'}: error: cannot read directory: Permission denied" in result.stderr
    assert f"{tmp_path / 'locked'}: error: cannot read directory: Permission denied" in result.stderr
    assert "contains no Python files" not in result.stderr


def test_a_query_over_a_file_that_fails_exits_one(tmp_path):
    (tmp_path / "good.py").write_text(CODE)
    (tmp_path / "bad.py").write_text("def f(:\n")
    result = run("query", 'qname(E, "torch.nn.functional.softmax")', "--source", tmp_path / "bad.py",
                 "--source", tmp_path / "good.py", "--format", "tsv")
    assert result.exit_code == 1
    assert "bad.py:1:" in result.stderr and len(result.stdout.splitlines()) == 2  # header and good.py's answer
