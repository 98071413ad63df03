"""The fork runner: every task answered once; a failing or dying child, or one over a limit,
costs its own task only; and no child outlives its parent."""

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import misbehave_for, process_alive
from typer.testing import CliRunner

from adopter.matches import pipeline
from adopter.cli.app import app
from adopter.support.cache import ResultCache
from adopter.support.forks import Limits, map_forked
from adopter.rules.registry import load_rules

SUMMARY = pipeline.Request.of(None, want_summary=True, want_facts=False, cache=ResultCache(None))


def _square_or_fail(n: int) -> int:
    if n == 3:
        raise ValueError("three is refused")
    if n == 5:
        os._exit(7)  # a child that dies without answering
    if n == 6:
        os.kill(os.getpid(), signal.SIGKILL)  # the out-of-memory killer
    return n * n


def _pid(_task) -> int:
    return os.getpid()


def test_every_task_is_answered_once_and_failures_stay_with_their_task():
    out = {index: (ok, value) for index, ok, value in map_forked(_square_or_fail, list(range(8)), workers=3)}
    assert sorted(out) == list(range(8))
    assert all(out[i] == (True, i * i) for i in (0, 1, 2, 4, 7))
    assert out[3][0] is False and "ValueError: three is refused" in out[3][1]
    assert out[5] == (False, "worker process died (exit code 7)")
    assert out[6] == (False, "worker process killed by signal 9")


def test_each_task_runs_in_a_fresh_process():
    pids = [value for _, _, value in map_forked(_pid, list(range(6)), workers=2)]
    assert len(set(pids)) == 6 and os.getpid() not in pids


def test_a_crashing_file_fails_alone_in_a_parallel_scan(tmp_path, monkeypatch):
    good = tmp_path / "good.py"
    good.write_text("import torch\nx = torch.softmax(torch.ones(2), dim=-1)\n")
    bad = tmp_path / "bad.py"
    bad.write_text("y = 1\n")
    misbehave_for(monkeypatch, pipeline, "analyse_file", "bad.py", lambda: os._exit(9))
    results, _ = pipeline.run_files([good, bad], SUMMARY, jobs=2)
    by_name = {Path(r.path).name: r for r in results}
    assert not by_name["good.py"].failed and by_name["good.py"].summary is not None
    assert by_name["bad.py"].failed
    assert "worker process died (exit code 9)" in by_name["bad.py"].diagnostics[0].message


GOOD = "import torch\nx = torch.softmax(torch.ones(2), dim=-1)\n"


def _two_files(tmp_path: Path, bad_name: str) -> list[Path]:
    good, bad = tmp_path / "good.py", tmp_path / bad_name
    good.write_text(GOOD)
    bad.write_text(GOOD)
    return [good, bad]


def _misbehaving(monkeypatch, name: str, behaviour) -> None:
    misbehave_for(monkeypatch, pipeline, "analyse_file", name, behaviour)


def _by_name(run) -> dict:
    results, _run_problems = run
    return {Path(r.path).name: r for r in results}


@pytest.mark.parametrize("jobs", [1, 2])
def test_a_file_over_the_memory_limit_fails_alone(tmp_path, monkeypatch, jobs):
    _misbehaving(monkeypatch, "big.py", lambda: bytearray(400 * 2**20))
    results = _by_name(pipeline.run_files(_two_files(tmp_path, "big.py"), SUMMARY, jobs=jobs,
                                          limits=Limits(megabytes=100)))
    assert not results["good.py"].failed and results["good.py"].summary is not None
    [diagnostic] = results["big.py"].diagnostics
    assert diagnostic.message == "analysis stopped: needed more than 100 MB of memory (--file-memory)"


@pytest.mark.parametrize("jobs", [1, 2])
def test_a_file_over_the_time_limit_fails_alone(tmp_path, monkeypatch, jobs):
    _misbehaving(monkeypatch, "slow.py", lambda: time.sleep(600))
    results = _by_name(pipeline.run_files(_two_files(tmp_path, "slow.py"), SUMMARY, jobs=jobs,
                                          limits=Limits(seconds=1)))
    assert not results["good.py"].failed and results["good.py"].summary is not None
    [diagnostic] = results["slow.py"].diagnostics
    assert diagnostic.message == "analysis stopped: took longer than 1 s (--file-timeout)"


def test_the_limits_hold_for_a_single_file_from_the_command_line(tmp_path, monkeypatch):
    _misbehaving(monkeypatch, "slow.py", lambda: time.sleep(600))
    slow = _two_files(tmp_path, "slow.py")[1]
    result = CliRunner().invoke(app, ["scan", str(slow), "--no-cache", "--file-timeout", "1", "--format", "jsonl"])
    assert result.exit_code == 1
    assert result.stderr == f"{slow}: error: analysis stopped: took longer than 1 s (--file-timeout)\n"


# A script that runs the CLI with a step that never ends, after writing its pid to a file,
# so that a test can kill the CLI while its children run.
_HANGING = """
import os, sys, time
from pathlib import Path
from adopter.api import apply
from adopter.cli import app as cli
from adopter.matches import pipeline

PIDS = Path(sys.argv[1])

def hang(*args, **kwargs):
    (PIDS / str(os.getpid())).touch()
    time.sleep(600)

if sys.argv[2] == "scan":
    pipeline.analyse_file = hang
else:
    apply.patch_file = hang
sys.argv = ["adopter", *sys.argv[2:]]
cli.main()
"""


def _kill_and_watch(tmp_path: Path, command: list[str], workers: int) -> list[int]:
    """Run the CLI with `command`, SIGKILL it once `workers` children hang, and return the
    children still alive a while later."""
    pids = tmp_path / "pids"
    pids.mkdir()
    script = tmp_path / "hang.py"
    script.write_text(_HANGING)
    cli = subprocess.Popen([sys.executable, str(script), str(pids), *command], cwd=tmp_path,
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    children: list[int] = []
    try:
        for _ in range(600):  # the children start within seconds; a minute is a failure
            children = [int(p.name) for p in pids.iterdir()]
            if len(children) >= workers or cli.poll() is not None:
                break
            time.sleep(0.1)
        assert len(children) >= workers, f"the children did not start (exit {cli.poll()})"
        cli.send_signal(signal.SIGKILL)
        cli.wait()
        for _ in range(100):
            if not any(map(process_alive, children)):
                break
            time.sleep(0.1)
        return [pid for pid in children if process_alive(pid)]
    finally:
        cli.kill()
        for pid in children:
            if process_alive(pid):
                os.kill(pid, signal.SIGKILL)


def test_a_killed_scan_leaves_no_worker_behind(tmp_path):
    for i in range(4):
        (tmp_path / f"m{i}.py").write_text(GOOD)
    assert _kill_and_watch(tmp_path, ["scan", ".", "-j", "2", "--no-cache", "--file-timeout", "0"], workers=2) == []


MODEL = """
import torch
from torch import nn
class M(nn.Module):
    def forward(self, x):
        v = x.pow(2).mean(-1, keepdim=True)
        return x * torch.rsqrt(v + 1e-06)
"""


def test_a_killed_apply_leaves_no_rewriting_worker_behind(tmp_path):
    for i in range(4):  # the rewriter runs in a pool from 4 files with matches
        (tmp_path / f"m{i}.py").write_text(MODEL)
    assert _kill_and_watch(tmp_path, ["apply", ".", "--diff", "-j", "2", "--no-cache"], workers=2) == []


def test_a_rewrite_over_the_time_limit_fails_alone(tmp_path, monkeypatch):
    """apply rewrites in the same pool as the analysis: one file per fork, within the limits."""
    from adopter.api import apply

    for name in ("good.py", "slow.py"):
        (tmp_path / name).write_text(MODEL)
    misbehave_for(monkeypatch, apply, "patch_file", "slow.py", lambda: time.sleep(600))
    report = apply.plan_patches([str(tmp_path)], load_rules(["rms_norm"], cache_dir=None), jobs=2, cache_dir=None,
                                kernels="torch", limits=Limits(seconds=2))
    assert [p.path for p in report.patches if p.changed] == [str(tmp_path / "good.py")]
    assert [(d.file, d.message) for d in report.diagnostics] == [
        (str(tmp_path / "slow.py"), "rewrite stopped: took longer than 2 s (--file-timeout)")]
