"""Every command bounded and stoppable: a query runs under time and memory limits, a query
whose literals share no variable is refused, and SIGTERM stops a query or a scan mid-ground
at once (exit 130), leaving no worker and no temporary file behind."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import process_alive
from typer.testing import CliRunner

from adopter.cli.app import app

PRODUCT = "node_type(A, _), node_type(B, _), node_type(C, _)"


def _long_forward(calls: int) -> str:
    """A module whose forward makes `calls` calls: a product of three node sets is calls**3 answers."""
    body = "".join("        x = torch.relu(x)\n" for _ in range(calls))
    return f"import torch\nfrom torch import nn\n\n\nclass M(nn.Module):\n    def forward(self, x):\n{body}        return x\n"


def run(*args):
    return CliRunner().invoke(app, list(map(str, args)))


def test_a_query_whose_literals_share_no_variable_is_refused_with_the_reason(tmp_path):
    (tmp_path / "m.py").write_text(_long_forward(3))
    result = run("query", PRODUCT, "--source", tmp_path / "m.py")
    assert result.exit_code == 2
    assert "its literals fall into 3 groups that share no variable" in result.stderr
    assert "--allow-product" in result.stderr and result.stdout == ""
    # joined by a shared variable, the same relations are one group: answered
    joined = run("query", "node_type(A, T), node_type(B, T)", "--source", tmp_path / "m.py", "--format", "tsv")
    assert joined.exit_code == 0 and len(joined.stdout.splitlines()) == 1 + 3 * 3


@pytest.mark.parametrize("limit, message", [
    (["--timeout", "1", "--memory", "0"], "query stopped: took longer than 1 s (--timeout); no answers are given"),
    (["--timeout", "0", "--memory", "200"],
     "query stopped: needed more than 200 MB of memory (--memory); no answers are given")])
def test_the_three_way_product_stops_at_its_limit_with_one_diagnostic(tmp_path, limit, message):
    source = tmp_path / "m.py"
    source.write_text(_long_forward(400))  # 64 M answers
    result = run("query", PRODUCT, "--source", source, "--allow-product", *limit)
    assert result.exit_code == 1 and result.stdout == ""
    assert result.stderr == f"{source}: error: {message}\n"


def test_the_api_bounds_a_query_too(tmp_path):
    from adopter.api.query import QueryStopped, run_query
    from adopter.extract.sources import facts_of_file

    facts, _ = facts_of_file(_write(tmp_path / "m.py", _long_forward(400)))
    with pytest.raises(QueryStopped, match="took longer than 1 s"):
        run_query([facts], PRODUCT, timeout=1, memory=None, allow_product=True)
    assert len(run_query([facts], 'node_type(X, "torch.relu")')) == 400


def _write(path: Path, text: str) -> Path:
    path.write_text(text)
    return path


def _children(pid: int) -> list[int]:
    """The live processes whose parent is `pid`."""
    found = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue
        if int(fields[1]) == pid and fields[0] != "Z":
            found.append(int(stat.parent.name))
    return found


def _terminate_mid_ground(command: list[str], cwd: Path, env: dict) -> tuple[int, float, list[int]]:
    """Start `adopter COMMAND`, send SIGTERM once a worker has run a second, and return the exit
    status, the seconds from the signal to the exit, and the workers still alive after it."""
    cli = subprocess.Popen([sys.executable, "-m", "adopter", *command], cwd=cwd, env=env,
                           stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    workers: list[int] = []
    try:
        for _ in range(300):
            workers = _children(cli.pid)
            if workers or cli.poll() is not None:
                break
            time.sleep(0.05)
        assert workers, f"no worker started (exit {cli.poll()}): {cli.stderr.read() if cli.poll() is not None else ''}"
        time.sleep(1.0)  # the workers are grounding now
        cli.send_signal(signal.SIGTERM)
        sent = time.monotonic()
        status = cli.wait(timeout=10)  # (a bound against hanging; the time it took is returned)
        took = time.monotonic() - sent
        time.sleep(0.2)
        return status, took, [pid for pid in workers if process_alive(pid)]
    finally:
        cli.kill()
        for pid in workers:
            if process_alive(pid):
                os.kill(pid, signal.SIGKILL)


def _temporary_files(folder: Path) -> list[Path]:
    return [p for p in folder.rglob(".*") if p.is_file() and (p.name.endswith(".tmp") or ".adopter-" in p.name
                                                             or p.suffix.startswith(".tmp"))]


def test_sigterm_stops_a_query_mid_ground(tmp_path):
    _write(tmp_path / "m.py", _long_forward(400))
    env = {**os.environ, "ADOPTER_CACHE": str(tmp_path / "cache")}
    status, took, left = _terminate_mid_ground(["query", PRODUCT, "--source", "m.py", "--allow-product",
                                                "--timeout", "0", "--memory", "0"], tmp_path, env)
    assert status in (130, 143) and left == []
    assert _temporary_files(tmp_path) == []
    print(f"query: exit {status} {took:.3f} s after SIGTERM")


def test_sigterm_stops_a_scan_mid_ground(tmp_path):
    for i in range(12):  # (above the size of files analysed several to a worker)
        _write(tmp_path / f"m{i}.py", _long_forward(4000))
    env = {**os.environ, "ADOPTER_CACHE": str(tmp_path / "cache")}
    status, took, left = _terminate_mid_ground(["scan", ".", "-j", "2", "-o", "out.jsonl", "--file-timeout", "0"],
                                               tmp_path, env)
    assert status in (130, 143) and left == []
    assert _temporary_files(tmp_path) == [] and not (tmp_path / "out.jsonl").exists()
    print(f"scan: exit {status} {took:.3f} s after SIGTERM")
