"""Run a function over tasks, each in a fresh fork, a few at a time.

Why a fresh process per file: clingo interns every symbol in a process-wide table that
is never freed, and its heap fragments, so a long-lived worker grounds each file more
slowly than the last (a file grounds 2x slower after 75 others); freeing a ground
program object by object is slow too, and an exiting process skips it. A fork inherits
the parent's warm caches, so starting one is cheap. A child that dies (a crash, the
out-of-memory killer) costs its own task only.
"""

from __future__ import annotations

import gc
import multiprocessing
import traceback
from multiprocessing.connection import wait
from typing import Callable, Iterator, Sequence

_FORK = multiprocessing.get_context("fork")


def _child(function: Callable, task, sender) -> None:
    # the child lives for one task: collecting cycles would only walk (and copy, page by
    # page) the heap it shares with the parent (~4% of a file's CPU)
    gc.disable()
    try:
        outcome = (True, function(task))
    except BaseException:  # noqa: BLE001 - reported to the parent as this task's failure
        outcome = (False, traceback.format_exc(limit=-3))
    sender.send(outcome)
    sender.close()


def _death(exitcode: int | None) -> str:
    if exitcode is not None and exitcode < 0:
        return f"worker process killed by signal {-exitcode}"
    return f"worker process died (exit code {exitcode})"


def map_forked(function: Callable, tasks: Sequence, workers: int) -> Iterator[tuple[int, bool, object]]:
    """Yield (index, True, result) or (index, False, why it failed) for every task,
    in the order they finish, with at most `workers` children running at once."""
    pending = iter(range(len(tasks)))
    running: dict = {}  # receiving end of a child's pipe -> (index, process)
    gc.freeze()  # what exists now lives on: the parent's collections need not walk it again

    def start_next() -> bool:
        index = next(pending, None)
        if index is None:
            return False
        receiver, sender = _FORK.Pipe(duplex=False)
        process = _FORK.Process(target=_child, args=(function, tasks[index], sender), daemon=True)
        process.start()
        sender.close()  # the child's copy stays open: end of file here means the child is gone
        running[receiver] = (index, process)
        return True

    try:
        while len(running) < workers and start_next():
            pass
        while running:
            for receiver in wait(list(running)):
                index, process = running.pop(receiver)
                try:
                    ok, value = receiver.recv()
                except EOFError:
                    process.join()
                    ok, value = False, _death(process.exitcode)
                receiver.close()
                process.join()
                yield index, ok, value
                start_next()
    finally:  # interrupted or abandoned: leave no child behind
        for receiver, (_, process) in running.items():
            process.kill()
            process.join()
            receiver.close()
