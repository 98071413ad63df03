"""The fork runner: every task answered once, and a failing or dying child costs its own task only."""

import os
import signal
from pathlib import Path

from adopter import pipeline
from adopter.forks import map_forked


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
    real = pipeline.analyse_file

    def crash_on_bad(path: Path, *args, **kwargs):
        if path.name == "bad.py":
            os._exit(9)
        return real(path, *args, **kwargs)

    monkeypatch.setattr(pipeline, "analyse_file", crash_on_bad)  # inherited by the forks
    results, _ = pipeline.run_files([good, bad], None, want_summary=True, want_facts=False, jobs=2)
    by_name = {Path(r.path).name: r for r in results}
    assert not by_name["good.py"].failed and by_name["good.py"].summary is not None
    assert by_name["bad.py"].failed
    assert "worker process died (exit code 9)" in by_name["bad.py"].diagnostics[0].message
