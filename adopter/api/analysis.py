"""`adopter facts`: extract every file's facts and run the Datalog core (with structure
counting, and the rules given, so that a following `scan` with them is a cache hit) in one pass."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Callable, Iterable

from adopter.support.cache import DEFAULT_DIR, ResultCache
from adopter.support.forks import Limits
from adopter.extract.tables import TableWriter, with_file_column
from adopter.matches.pipeline import Request, run_files
from adopter.api.run_report import RunReport
from adopter.extract.sources import ModuleNames, expand_paths
from adopter.rules.model import Rule


RunResult = RunReport  # the result of `run`


def run(paths: list[str], analyse: bool = True, rules: list[Rule] | None = None, jobs: int | None = None,
        progress: Callable[[Iterable, int], Iterable] | None = None, cache_dir: Path | None = DEFAULT_DIR,
        tables: Path | None = None, limits: Limits = Limits(), modules: ModuleNames = ModuleNames()) -> RunResult:
    """Process every file under `paths`; `progress` may wrap the stream of results.

    With `analyse`, the Datalog core runs too (and the summary counts its DL nodes and
    structures), with `rules` if given (their matches are cached for a later scan). With
    `tables`, the fact tables are written there as results arrive (committed at the end).
    A file's analysis over `limits` (time, memory) is one diagnostic.
    """
    start = time.perf_counter()
    files, problems = expand_paths(paths)
    rules = rules if analyse else None
    writer = TableWriter(tables) if tables is not None else None
    position = {str(path): i for i, path in enumerate(files)}  # a file's rows come in the order of `files`

    def consume(stream: Iterable, total: int):
        for item in (progress(stream, total) if progress else stream):
            if item.tables is not None:  # written, not held: the whole run's rows would only cost memory
                writer.add_text(with_file_column(item.path, item.tables), position.get(item.path, len(files)))
                item.tables = None
            yield item

    try:
        request = Request.of(rules, want_summary=analyse, want_facts=True, cache=ResultCache(cache_dir),
                             render_tables=writer is not None)
        results, run_problems = run_files(files, request, jobs=jobs, progress=consume, limits=limits, modules=modules)
    except BaseException:
        if writer is not None:
            writer.abort()
        raise
    if writer is not None:
        writer.commit()
    return RunResult(results, problems + run_problems, time.perf_counter() - start)
