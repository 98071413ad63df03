"""The main path: extract facts from every file and run the Datalog core, in parallel.

Each file is independent: a failing file yields a diagnostic and the rest go on.
"""

from __future__ import annotations

import os
import time
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterable

import clingo

from adopter.diagnostics import Diagnostic
from adopter.sources import expand_paths, facts_of_file
from adopter.structures import DEFAULT_MAX_GUARDS, FORWARD_ROOTS, count_structures
from datalog.engine import solve
from extractor.python_facts import FileFacts

# Relations summarised per file by the core analysis.
_SUMMARY = {"dl_node", "structure_node", "too_many_guards"}


@dataclass
class FileResult:
    path: str
    facts: FileFacts | None
    diagnostics: list[Diagnostic]
    dl_nodes: int = 0
    structures: int = 0  # distinct model structures of the `forward` methods
    skipped_roots: int = 0  # forward methods with too many guards to enumerate


@dataclass
class RunResult:
    files: list[FileResult] = field(default_factory=list)
    path_problems: list[Diagnostic] = field(default_factory=list)
    seconds: float = 0.0

    @property
    def diagnostics(self) -> list[Diagnostic]:
        return self.path_problems + [d for f in self.files for d in f.diagnostics]

    @property
    def failed(self) -> int:
        return sum(1 for d in self.diagnostics if d.severity == "error")

    @property
    def all_facts(self) -> list[FileFacts]:
        return [f.facts for f in self.files if f.facts is not None]


def process_file(path: Path, analyse: bool = True) -> FileResult:
    facts, problem = facts_of_file(path)
    result = FileResult(str(path), facts, [problem] if problem else [])
    if facts is None or not analyse:
        return result
    try:
        model = solve(facts, extra_program=FORWARD_ROOTS, keep=_SUMMARY,
                      parts=[("structures", [clingo.Number(DEFAULT_MAX_GUARDS)])])
    except RuntimeError as error:  # clingo failure: report, do not stop the run
        result.diagnostics.append(Diagnostic(str(path), None, None, f"analysis failed: {error}"))
        return result
    result.dl_nodes = len(model.get("dl_node"))
    result.structures, result.skipped_roots = count_structures(model)
    return result


def run(paths: list[str], analyse: bool = True, jobs: int | None = None,
        progress: Callable[[Iterable[FileResult], int], Iterable[FileResult]] | None = None) -> RunResult:
    """Process every file under `paths`; `progress` may wrap the stream of results."""
    start = time.perf_counter()
    files, problems = expand_paths(paths)
    result = RunResult(path_problems=problems)
    jobs = jobs or os.cpu_count() or 1
    if jobs > 1 and len(files) > 1:
        with ProcessPoolExecutor(max_workers=min(jobs, len(files))) as pool:
            stream = pool.map(process_file, files, [analyse] * len(files), chunksize=1)
            result.files = list(progress(stream, len(files)) if progress else stream)
    else:
        stream = (process_file(f, analyse) for f in files)
        result.files = list(progress(stream, len(files)) if progress else stream)
    result.seconds = time.perf_counter() - start
    return result
