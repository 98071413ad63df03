"""Run a function over tasks, each in a fresh fork, a few at a time, within limits.

Why a fresh process per file: clingo interns every symbol in a process-wide table that
is never freed, and its heap fragments, so a long-lived worker grounds each file more
slowly than the last; freeing a ground program object by object is slow too, and an
exiting process skips it. A fork inherits the parent's warm caches, so starting one is
cheap. A child that dies (a crash, the out-of-memory killer) costs its own task only,
and so does one stopped by a limit: the parent kills a child that runs longer than
`Limits.seconds`, and a child's memory is capped at `Limits.megabytes` more than it
started with. A child never outlives its parent (`Lifeline`): a killed parent must not
leave workers holding its caller's pipes.
"""

from __future__ import annotations

import ctypes
import gc
import multiprocessing
import os
import resource
import signal
import sys
import threading
import time
import traceback
from dataclasses import dataclass
from multiprocessing.connection import wait
from typing import Callable, Iterator, Sequence

# how Adopter starts every child: a fork shares the parent's loaded programs and, unlike a
# spawned process, inherits the lifeline's pipe (Lifeline)
FORK = multiprocessing.get_context("fork")
_PR_SET_PDEATHSIG = 1  # <linux/prctl.h>


@dataclass(frozen=True)
class Limits:
    """What one task may take: wall-clock seconds and megabytes of memory (None: no limit)."""

    seconds: float | None = None
    megabytes: int | None = None

    def __bool__(self) -> bool:
        return bool(self.seconds or self.megabytes)


@dataclass(frozen=True)
class Stopped:
    """Why a task was stopped: the limit it broke ("time" or "memory") and that limit."""

    limit: str
    value: float

    def reason(self, step: str, options: tuple[str, str] = ("--file-timeout", "--file-memory")) -> str:
        """Why `step` (analysis, rewrite, query) stopped, naming the option (time, memory) that sets the limit."""
        if self.limit == "time":
            return f"{step} stopped: took longer than {self.value:g} s ({options[0]})"
        return f"{step} stopped: needed more than {self.value:g} MB of memory ({options[1]})"


def failure_reason(why: "Stopped | str", step: str,
                   options: tuple[str, str] = ("--file-timeout", "--file-memory")) -> str:
    """Why `step` failed in a worker: a limit it broke (`Stopped`), or the worker's own words
    (`map_forked`'s failure value: a traceback's end, or how the process died)."""
    return why.reason(step, options) if isinstance(why, Stopped) else f"{step} failed: {why.strip()}"


def _linux_prctl():
    if not sys.platform.startswith("linux"):
        return None
    try:  # (the process's own symbols hold the C library's: `find_library` would run `ldconfig -p` at every start)
        return ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):
        return None


_prctl = _linux_prctl()


class Lifeline:
    """Made in a parent before it forks, `attach`ed in each child: the child then ends when
    the parent does, however the parent ends (SIGKILL included).

    On Linux the kernel sends the child SIGKILL when its parent dies (PR_SET_PDEATHSIG);
    elsewhere a thread in the child waits on a pipe that only the parent can write to, and
    reads end-of-file when the parent is gone. Either way, a parent that died before the
    child asked is caught by comparing the child's parent with the one it was forked from."""

    def __init__(self) -> None:
        self.parent = os.getpid()
        self.read, self.write = (None, None) if _prctl is not None else os.pipe()

    def attach(self) -> None:
        """In the child, first thing after the fork."""
        if _prctl is not None:
            _prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
        else:
            os.close(self.write)  # the parent's copy must be the last one open
            threading.Thread(target=self._watch, daemon=True).start()
        if os.getppid() != self.parent:  # the parent died before the child could ask
            os._exit(1)

    def _watch(self) -> None:
        try:
            os.read(self.read, 1)  # returns (empty) only when the parent's end is closed
        finally:
            os._exit(1)

    def close(self) -> None:
        """In the parent, once no child of it runs."""
        for fd in (self.read, self.write):
            if fd is not None:
                os.close(fd)
        self.read = self.write = None


def _address_space() -> int:
    """Bytes of address space this process has now (0 where that cannot be read)."""
    try:
        with open("/proc/self/statm") as handle:
            return int(handle.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return 0


def _interrupted(_signum, _frame) -> None:
    raise KeyboardInterrupt


def _child(function: Callable, task, sender, lifeline: Lifeline, limits: Limits) -> None:
    lifeline.attach()
    # SIGTERM (from `map_forked` stopping its children) unwinds the task as Ctrl-C does: a
    # file being written is removed, not left half-written (atomic.py, cache.py)
    signal.signal(signal.SIGTERM, _interrupted)
    # the child lives for one task: collecting cycles would only walk (and copy, page by
    # page) the heap it shares with the parent, CPU spent for nothing
    gc.disable()
    _, hard = resource.getrlimit(resource.RLIMIT_AS)
    if limits.megabytes:
        cap = _address_space() + limits.megabytes * 2**20
        resource.setrlimit(resource.RLIMIT_AS, (cap if hard == resource.RLIM_INFINITY else min(cap, hard), hard))
    try:
        outcome = (True, function(task))
    except MemoryError:
        resource.setrlimit(resource.RLIMIT_AS, (hard, hard))  # room to report it
        outcome = (False, Stopped("memory", limits.megabytes) if limits.megabytes else traceback.format_exc(limit=-3))
    except BaseException:  # noqa: BLE001 - reported to the parent as this task's failure
        outcome = (False, traceback.format_exc(limit=-3))
    sender.send(outcome)
    sender.close()


def _death(exitcode: int | None, limits: Limits) -> str:
    if exitcode is not None and exitcode < 0:
        hint = " (perhaps over the memory limit)" if limits.megabytes else ""
        return f"worker process killed by signal {-exitcode}{hint}"
    return f"worker process died (exit code {exitcode})"


def map_forked(function: Callable, tasks: Sequence, workers: int,
               limits: Limits = Limits()) -> Iterator[tuple[int, bool, object]]:
    """Yield (index, True, result) or (index, False, why it failed: text, or `Stopped`)
    for every task, in the order they finish, with at most `workers` children running at once."""
    pending = iter(range(len(tasks)))
    running: dict = {}  # receiving end of a child's pipe -> (index, process, deadline)
    lifeline = Lifeline()

    def start_next() -> bool:
        index = next(pending, None)
        if index is None:
            return False
        receiver, sender = FORK.Pipe(duplex=False)
        process = FORK.Process(target=_child, args=(function, tasks[index], sender, lifeline, limits), daemon=True)
        process.start()
        sender.close()  # the child's copy stays open: end of file here means the child is gone
        deadline = time.monotonic() + limits.seconds if limits.seconds else None
        running[receiver] = (index, process, deadline)
        return True

    try:
        while len(running) < workers and start_next():
            pass
        while running:
            deadlines = [d for _, _, d in running.values() if d is not None]
            timeout = max(0.0, min(deadlines) - time.monotonic()) if deadlines else None
            ready = wait(list(running), timeout)
            if not ready:  # the earliest deadline passed: stop that child
                now = time.monotonic()
                for receiver, (index, process, deadline) in list(running.items()):
                    if deadline is not None and deadline <= now:
                        process.kill()
                        process.join()
                        receiver.close()
                        del running[receiver]
                        yield index, False, Stopped("time", limits.seconds)
                        start_next()
                continue
            for receiver in ready:
                index, process, _ = running.pop(receiver)
                try:
                    ok, value = receiver.recv()
                except EOFError:
                    process.join()
                    ok, value = False, _death(process.exitcode, limits)
                receiver.close()
                process.join()
                yield index, ok, value
                start_next()
    finally:  # interrupted or abandoned: leave no child behind
        _stop(running)
        lifeline.close()


# How long children asked to stop may take to remove the temporary files they are writing
# (a child held in C code, as clingo grounding, is killed after it: stopping stays within a second)
STOP_GRACE_SECONDS = 0.3


def _stop(running: dict) -> None:
    """Stop every running child: SIGTERM, then SIGKILL for those still running after the grace."""
    for _, process, _ in running.values():
        process.terminate()
    deadline = time.monotonic() + STOP_GRACE_SECONDS
    for receiver, (_, process, _) in running.items():
        process.join(max(0.0, deadline - time.monotonic()))
        if process.is_alive():
            process.kill()
            process.join()
        receiver.close()
