"""`adopter facts`: extract every file's facts and run the Datalog core (with structure
counting and, so that a following `scan` is a cache hit, the bundled rules) in one pass."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Callable, Iterable

from adopter.support.cache import DEFAULT_DIR
from adopter.support.forks import Limits
from adopter.extract.tables import TableWriter, with_file_column
from adopter.matches.pipeline import run_files
from adopter.api.run_report import RunReport
from adopter.extract.sources import expand_paths
from adopter.rules.registry import load_rules


RunResult = RunReport  # the result of `run`


def run(paths: list[str], analyse: bool = True, jobs: int | None = None,
        progress: Callable[[Iterable, int], Iterable] | None = None, cache_dir: Path | None = DEFAULT_DIR,
        tables: Path | None = None, limits: Limits = Limits()) -> RunResult:
    """Process every file under `paths`; `progress` may wrap the stream of results.

    With `tables`, the fact tables are written there as results arrive (committed at the end).
    A file's analysis over `limits` (time, memory) is one diagnostic.
    """
    start = time.perf_counter()
    files, problems = expand_paths(paths)
    rules = load_rules() if analyse else None
    writer = TableWriter(tables) if tables is not None else None
    position = {str(path): i for i, path in enumerate(files)}  # a file's rows come in the order of `files`

    def consume(stream: Iterable, total: int):
        for item in (progress(stream, total) if progress else stream):
            if item.tables is not None:  # written, not held: the whole run's rows would only cost memory
                writer.add_text(with_file_column(item.path, item.tables), position.get(item.path, len(files)))
                item.tables = None
            yield item

    try:
        results, run_problems = run_files(files, rules, want_summary=analyse, want_facts=True, jobs=jobs, progress=consume,
                                          cache_dir=cache_dir, render_tables=writer is not None, limits=limits)
    except BaseException:
        if writer is not None:
            writer.abort()
        raise
    if writer is not None:
        writer.commit()
    return RunResult(results, problems + run_problems, time.perf_counter() - start)
