"""Whole-project analysis: the files of one run lend each other what their classes build, and
run each other's functions.

Each file is still analysed alone. Its analysis also says what it lends (every instance of
each of its classes has these attributes, built by these constructions: datalog/project/
exports.lp), which classes it names as bases without defining them, which globals it imports,
and which of its module-level functions (or tables of them) nothing in it runs
(datalog/project/entries.lp). A file is analysed again with what the run's other files lend it
(datalog/project/imports.lp: torchvision's quantized blocks subclass `resnet.BasicBlock` and run
the layers its `__init__` builds) and with the names of those functions that another file
imports, which become roots of their own (torchvision's `upsample_flow`, which raft.py calls).
What a file lends grows with what it is lent (a chain of bases across files), so this repeats
while what some file would be handed changes; it only grows, so it ends, and MAX_ROUNDS bounds it.

A class defined by two files of the run under one qualified name (two copies of a package)
lends nothing: which one a base names is not known.
"""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path
from typing import Callable, Iterable

from adopter.extract.sources import ModuleNames
from adopter.matches.pipeline import FileAnalysis, Request, run_files
from adopter.records import Diagnostic, LentCtor
from adopter.support.forks import Limits

MAX_ROUNDS = 8


def run_project(files: list[Path], request: Request, jobs: int | None = None,
                progress: Callable[[Iterable, int], Iterable] | None = None, limits: Limits = Limits(),
                modules: ModuleNames = ModuleNames()) -> tuple[list[FileAnalysis], list[Diagnostic]]:
    """`run_files` over `files` as one project: each file, then again each file that
    subclasses a class another file defines, with what that file lends, or whose functions
    another file imports (see the module's docstring). Returns each file's last analysis and
    the run's own problems."""
    results, problems = run_files(files, request, jobs=jobs, progress=progress, limits=limits, modules=modules)
    if request.rules is None:
        return results, problems
    handed: dict[int, tuple[tuple[LentCtor, ...], tuple[str, ...]]] = {}
    imported = {qname for result in results for qname in result.imports}  # (what a file imports does not grow)
    for _round in range(MAX_ROUNDS):
        lends = _lends_by_class(results)
        todo = []
        for i, result in enumerate(results):
            lent = tuple(lent for qname in result.wants for lent in lends.get(qname, ()))
            used = tuple(qname for qname in result.entries if qname in imported)
            if (lent, used) != handed.get(i, ((), ())):
                handed[i] = lent, used
                todo.append(i)
        if not todo:
            break
        again, more = run_files([files[i] for i in todo], request, jobs=jobs, progress=progress, limits=limits,
                                modules=modules, lent=[handed[i][0] for i in todo], used=[handed[i][1] for i in todo])
        for i, result in zip(todo, again):
            results[i] = result
        problems += [problem for problem in more if problem not in problems]
    return results, problems


def _lends_by_class(results: list[FileAnalysis]) -> dict[str, list[LentCtor]]:
    """What the run's files lend, by class (qualified name); a class two files define is left out."""
    by_class: dict[str, list[LentCtor]] = defaultdict(list)
    files: dict[str, set[str]] = defaultdict(set)
    for result in results:
        for lent in result.lends:  # (each of the file's own classes: exports.lp)
            files[lent.qname].add(result.path)
            by_class[lent.qname].append(lent)
    return {qname: lent for qname, lent in by_class.items() if len(files[qname]) == 1}
