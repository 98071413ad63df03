"""Timing and peak-memory measurement of commands run as subprocesses."""

from __future__ import annotations

import gc
import json
import os
import statistics
import subprocess
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from adopter.support.atomic import atomic_write_text


def _tree_rss_kib(pid: int) -> int:
    """Resident memory of a process and all its descendants (KiB), from /proc."""
    total, stack = 0, [pid]
    while stack:
        current = stack.pop()
        try:
            for line in Path(f"/proc/{current}/status").read_text().splitlines():
                if line.startswith("VmRSS:"):
                    total += int(line.split()[1])
                    break
            for task in Path(f"/proc/{current}/task").iterdir():
                children = (task / "children").read_text().split()
                stack.extend(int(c) for c in children)
        except (OSError, ValueError):
            continue
    return total


@dataclass
class Run:
    seconds: float
    peak_mib: float
    returncode: int


def run(command: list[str], env: dict | None = None, cwd: Path | None = None) -> Run:
    """Run a command, sampling the memory of its process tree every 20 ms."""
    start = time.perf_counter()
    process = subprocess.Popen(command, env={**os.environ, **(env or {})}, cwd=cwd,
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    peak = 0
    stop = threading.Event()

    def sample():
        nonlocal peak
        while not stop.is_set():
            peak = max(peak, _tree_rss_kib(process.pid))
            time.sleep(0.02)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    code = process.wait()
    seconds = time.perf_counter() - start
    stop.set()
    sampler.join()
    return Run(seconds, peak / 1024, code)


def cpu_in_fork(work: Callable[[], object]) -> tuple[float, object]:
    """CPU seconds of `work()` in a fork of this process, run as a cold run's worker runs a
    file (adopter/support/forks.py: no cyclic GC, clingo's controls kept to the end), and
    `work`'s result (JSON-ready)."""
    from adopter.datalog.engine import retain_controls  # (every caller has loaded it already)

    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(read)
        gc.disable()
        retain_controls()
        start = time.process_time()
        result = work()
        os.write(write, json.dumps([time.process_time() - start, result]).encode())
        os._exit(0)
    os.close(write)
    with os.fdopen(read) as handle:
        cpu, result = json.loads(handle.read())
    os.waitpid(pid, 0)
    return cpu, result


def median(values: list[float]) -> float:
    return statistics.median(values)


def write_table(frame, path: Path, heading: str) -> None:
    """Write a bench's table (a pandas frame) to `path` as TSV, atomically, then print
    `heading` and the table."""
    atomic_write_text(path, frame.to_csv(sep="\t", index=False))
    print(heading)
    print(frame.to_string(index=False))
