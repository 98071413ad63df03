"""`adopter scan`: every file under some paths, scanned with some rules."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Callable, Iterable

from adopter.api.run_report import RunReport
from adopter.extract.sources import ModuleNames, expand_paths
from adopter.extract.walk import Selection
from adopter.matches.pipeline import Request
from adopter.matches.project import run_project
from adopter.records import Match
from adopter.rules.model import Rule
from adopter.support.cache import DEFAULT_DIR as DEFAULT_CACHE, ResultCache
from adopter.support.forks import Limits

ScanResult = RunReport  # the result of `scan`


def scan(paths: list[str], rules: list[Rule], jobs: int | None = None,
         progress: Callable[[Iterable, int], Iterable] | None = None, cache_dir: Path | None = DEFAULT_CACHE,
         variant: str = "full", limits: Limits = Limits(), layout: bool = False, explain: bool = False,
         modules: ModuleNames = ModuleNames(), selection: Selection = Selection(),
         drop: Callable[[Match], bool] | None = None) -> ScanResult:
    """Scan every file under `paths` with `rules` (in parallel across files, cached by content).

    `variant` selects an ablation of the analyses (`adopter/datalog/variants/<variant>.lp`), for evaluation;
    a file's analysis over `limits` (time, memory) is one diagnostic; with `layout`, each
    match carries what the rewriter needs (`Match.layout`); with `explain`, the result also
    holds the near misses (`ScanResult.near_misses`: candidates that fail exactly one check);
    `modules` says which module each file is (its package, by default); `selection`, which files
    of a folder are scanned (adopter/extract/walk.py: by default not environments, caches or
    what the folder's .gitignore files ignore); `drop`, which matches a configuration leaves out
    (`per-file-ignores`: they join each file's `ignored`).
    """
    start = time.perf_counter()
    files, problems = expand_paths(paths, selection)
    request = Request.of(rules, want_summary=False, want_facts=False, cache=ResultCache(cache_dir), variant=variant,
                         layout=layout, explain=explain)
    # (the files as one project: a class another file subclasses lends it its layers)
    results, run_problems = run_project(files, request, jobs=jobs, progress=progress, limits=limits, modules=modules)
    if drop is not None:
        for result in results:
            kept = []
            for match in result.matches or ():
                (result.ignored if drop(match) else kept).append(match)
            if result.matches:
                result.matches = kept
    return ScanResult(results, problems + run_problems, time.perf_counter() - start)
