"""The per-file pipeline shared by `adopter facts` and `adopter scan`.

For each file: read its bytes; look up what is wanted (facts, the core summary, the
matches of a rule set) in the content-keyed cache; extract facts and run clingo once
for whatever is missing (core, rules and structure counting in one program); store
the new results. Files are independent and run in parallel; a failing file yields a
diagnostic and the others go on. Small files go to clingo several at a time
(`analyse_batch`, adopter/datalog/batch.py): each still gets what its own run would give.
"""

from __future__ import annotations

import json
import os
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterable


from adopter.support.cache import ResultCache, entry_key
from adopter.records import Diagnostic
from adopter.extract.tables import ROW_START, table_rows
from adopter.support.forks import Limits, failure_reason, map_forked
from adopter.support.plain import from_plain, to_plain
from adopter.records import LentCtor, Match, NearMiss
from adopter.matches.build import (EXPLAIN_PART, LAYOUT_PART, PROJECT, REPORTED, matches_from_model, near_misses_from_model,
                                   project_from_model, rules_program, unmodelled_warnings)
from adopter.extract.sources import ModuleNames, decode_source, extract_text, read_bytes
from adopter.extract.suppressions import EVERY_RULE, ignores, suppressions
from adopter.matches.structures import SUMMARY_MAX_GUARDS, count_structures, forward_structure_parts
from adopter.datalog import batch
from adopter.datalog.engine import MAIN_PROGRAM, MATCH_PROGRAMS, prepare, retain_controls, solve
from adopter.extract.python_facts import FileFacts
from adopter.extract.schema import INT_COLUMNS, RELATIONS
from adopter.rules.model import Rule

_SUMMARY = {"dl_node", "structure_scope", "too_many_guards"}


@dataclass
class FileAnalysis:
    path: str
    diagnostics: list[Diagnostic] = field(default_factory=list)
    facts: FileFacts | None = None
    tables: dict[str, str] | None = None  # the facts as rows without the file column (tables.table_rows), when asked
    matches: list[Match] | None = None
    near_misses: list[NearMiss] = field(default_factory=list)  # with `explain`
    # kept out by `# adopter: ignore[...]` on their line (adopter/extract/suppressions.py), and the
    # suppressions that kept nothing out: (line, the rule ids, or "" for every rule)
    ignored: list[Match] = field(default_factory=list)
    unused_ignores: list[tuple[int, str]] = field(default_factory=list)
    # (DL nodes, forward structures, forward methods not enumerated), over the analyses with the run's rules
    summary: tuple[int, int, int] | None = None
    # what the file lends the other files of its project, and the classes it names as bases and
    # does not define (adopter/matches/project.py)
    lends: list[LentCtor] = field(default_factory=list)
    wants: list[str] = field(default_factory=list)
    # the globals it imports by name, and those of its own that are roots where another file
    # imports them (datalog/project/entries.lp)
    imports: list[str] = field(default_factory=list)
    entries: list[str] = field(default_factory=list)
    cached: bool = False
    seconds: float = 0.0
    fact_count: int = 0
    cache_problem: str | None = None  # why a result could not be cached (reported once per run)

    @property
    def failed(self) -> bool:
        return any(d.severity == "error" for d in self.diagnostics)


@dataclass(frozen=True)
class Request:
    """What a run asks of every file: the facts (as rows, or as TSV rows with `render_tables`),
    the core summary, the matches of `rules` (with each match's layout, what `apply` needs,
    with `layout`; and the near misses with `explain`), under the analyses' `variant`."""

    rules: list[Rule] | None
    want_summary: bool
    want_facts: bool
    cache: ResultCache
    variant: str = "full"
    render_tables: bool = False
    layout: bool = False
    explain: bool = False
    program: str = ""  # the rules compiled (`rules_program`), once per run

    @classmethod
    def of(cls, rules: list[Rule] | None, *args, **kwargs) -> "Request":
        # (the program, and so the cache key, is the same whatever order the rules were chosen in)
        program = rules_program(sorted(rules, key=lambda rule: rule.key)) if rules else ""
        return cls(rules, *args, **kwargs, program=program)


@dataclass(frozen=True)
class FileTask:
    """One file of a run: its path, the dotted module name it is analysed as (relative imports
    resolve against it), the run's request, and what other files of the project lend it."""

    path: Path
    module: str
    request: Request
    lent: tuple[LentCtor, ...] = ()
    used: tuple[str, ...] = ()  # its entry candidates other files import


def analyse_file(task: FileTask, only_cached: bool = False) -> FileAnalysis | None:
    """Analyse one file; with `only_cached`, return None unless everything wanted is cached.
    With `render_tables`, the facts come back as TSV rows (`tables`, without the file
    column: `tables.with_file_column` adds it), not as rows."""
    begun = _begin(task, only_cached)
    if not isinstance(begun, _Pending):
        return begun
    request = task.request
    try:
        solved = _solve(begun.facts, request, "summary" in begun.missing, "matches" in begun.missing)
    except RuntimeError as error:
        return begun.failed(error)
    return _finish(begun, solved, request.cache)


def analyse_batch(tasks: list[FileTask]) -> list[FileAnalysis]:
    """`analyse_file` of several files of one request, the ones that need clingo in one run
    of it (adopter/datalog/batch.py): for small files, whose analysis is mostly what every
    run pays before any fact."""
    begun = [_begin(task) for task in tasks]
    pending = [b for b in begun if isinstance(b, _Pending)]
    if pending:
        request = tasks[0].request
        summary = any("summary" in p.missing for p in pending)
        matches = any("matches" in p.missing for p in pending)
        try:
            solved = _solve_batch([p.facts for p in pending], request, summary, matches)
        except RuntimeError as error:
            solved = [error] * len(pending)
        done = {id(p): p.failed(s) if isinstance(s, RuntimeError) else _finish(p, s, request.cache)
                for p, s in zip(pending, solved)}
        begun = [done.get(id(b), b) for b in begun]
    return begun


@dataclass
class _Pending:
    """A file whose facts are extracted and whose summary or matches are still to be solved."""

    result: FileAnalysis
    facts: FileFacts | None  # (None: nothing left to solve)
    found: dict
    missing: set[str]
    keys: dict[str, str]
    render_tables: bool
    start: float
    data: bytes = b""  # the file's bytes (its suppressions are read from them)

    def failed(self, error: RuntimeError) -> FileAnalysis:
        self.result.diagnostics.append(Diagnostic(self.result.path, None, None, f"analysis failed: {error}"))
        return self.result


def _begin(task: FileTask, only_cached: bool = False) -> FileAnalysis | _Pending | None:
    """A file's analysis up to clingo: its cached results, else its facts (extracted and
    cached); a finished analysis when nothing is left to solve (or the file failed)."""
    path, module, request = task.path, task.module, task.request
    rules, program, cache, variant = request.rules, request.program, request.cache, request.variant
    want_summary, want_facts, render_tables = request.want_summary, request.want_facts, request.render_tables
    layout, explain = request.layout, request.explain
    start = time.perf_counter()
    result = FileAnalysis(str(path))
    data, problem = read_bytes(path)
    if problem:
        result.diagnostics.append(problem)
        return result
    # the facts are cached as rows, or as their table rows (TSV text without the file column, and
    # the row count) when tables are asked: rendered once, and text is cheap to write and to read
    facts_kind = "tables" if render_tables else "facts"
    # (the dotted name resolves relative imports: the same text in another package is another analysis)
    if cache.folder is None:  # keys hash the file and all of Adopter's code: skip when nothing is cached
        keys = dict.fromkeys((facts_kind, "summary", "matches"), "")
    else:
        keys = {facts_kind: entry_key(data, facts_kind, str(path), module),
                "summary": entry_key(data, "summary", module, variant),
                "matches": entry_key(data, "matches", program, str(path), module, variant, "layout" if layout else "",
                                     "explain" if explain else "", json.dumps(to_plain(task.lent)),
                                     json.dumps(task.used))}
    wanted = {k for k, on in ((facts_kind, want_facts), ("summary", want_summary), ("matches", rules is not None)) if on}
    found = {k: cache.get(keys[k], k, _CODECS[k][1]) for k in wanted}
    missing = {k for k, v in found.items() if v is None}
    if missing and only_cached:
        return None
    pending = None
    if missing:
        text, problem = decode_source(data, path)
        if text is None:
            result.diagnostics.append(problem)
            return result
        facts, problem = extract_text(text, path, module)
        if problem:
            result.diagnostics.append(problem)
        if facts is None:
            return result
        if facts_kind in missing:  # here, in the worker: the parent only writes the tables
            found[facts_kind] = (table_rows(facts), facts.count()) if render_tables else facts
            result.cache_problem = _store(cache, keys[facts_kind], facts_kind, found[facts_kind])
        if task.lent:  # (after the facts are stored: they are the file's own)
            facts.lent = {-k: lent for k, lent in enumerate(task.lent, 1)}
            facts.rows["import_attr"] = [(k, lent.qname, lent.attr, lent.type) for k, lent in facts.lent.items()]
        if task.used:
            facts.rows["used_elsewhere"] = [(qname,) for qname in task.used]
        pending = _Pending(result, facts, found, missing, keys, render_tables, start, data)
        if missing & {"summary", "matches"}:
            return pending
    return _finish(pending or _Pending(result, None, found, missing, keys, render_tables, start, data), {}, cache)


def _finish(pending: _Pending, solved: dict, cache: ResultCache) -> FileAnalysis:
    """The analysis of a file from its cached and solved results (the solved ones cached)."""
    result, found, missing = pending.result, pending.found, pending.missing
    for kind in missing & {"summary", "matches"}:
        found[kind] = solved[kind]
        result.cache_problem = _store(cache, pending.keys[kind], kind, found[kind]) or result.cache_problem
    if pending.render_tables:
        result.tables, result.fact_count = found.get("tables") or (None, 0)
    else:
        result.facts = found.get("facts")
        result.fact_count = result.facts.count() if result.facts is not None else 0
    result.summary = found.get("summary")
    if found.get("matches") is not None:  # the matches, and the warnings about functions left unmatched
        (result.matches, warnings, result.near_misses, result.lends, result.wants, result.imports,
         result.entries) = found["matches"]
        result.diagnostics += warnings
        _suppress(result, pending.data)
    result.cached = not missing
    result.seconds = time.perf_counter() - pending.start
    return result


# (a lowered copy and a plain search: a case-blind regex scans bytes eight times slower, 87
# against 10 ms over the zoo, a sixth of a warm scan)
_MAY_SUPPRESS = b"adopter:"


def _suppress(result: FileAnalysis, data: bytes) -> None:
    """Keep the matches and near misses a `# adopter: ignore` names out (after the cache: the
    comments are part of the bytes the cache keys by), and note the ignores that named none."""
    if data.lower().find(_MAY_SUPPRESS) < 0:
        return
    text, _problem = decode_source(data, Path(result.path))
    suppressed = suppressions(text or "")
    if not suppressed:
        return
    used: set[int] = set()
    kept = []
    for match in result.matches:
        if ignores(suppressed, match.line, match.rule):
            result.ignored.append(match)
            used.add(match.line)
        else:
            kept.append(match)
    result.matches = kept
    result.near_misses = [m for m in result.near_misses if not ignores(suppressed, m.line, m.rule)]
    result.unused_ignores = [(line, ", ".join(sorted(ids)) if ids is not EVERY_RULE else "")
                             for line, ids in sorted(suppressed.items()) if line not in used]


def _store(cache: ResultCache, key: str, kind: str, value) -> str | None:
    return cache.put(key, kind, *_CODECS[kind][0](value))


def _encode_tables(value: tuple[dict[str, str], int]) -> tuple[object, list[str]]:
    tables, count = value
    return [list(tables), count], list(tables.values())


def _decode_tables(value, texts: list[str]) -> tuple[dict[str, str], int]:
    relations, count = from_plain(tuple[list[str], int], value)
    if not set(relations) <= set(RELATIONS) or len(relations) != len(texts) \
            or not all(text.startswith(ROW_START) for text in texts):
        raise ValueError("the tables do not fit the schema")
    return dict(zip(relations, texts)), count


def _decode_facts(value, _texts) -> FileFacts:
    facts = FileFacts(from_plain(str, value["path"]))
    rows = from_plain(dict[str, list[list[int | str]]], value["rows"])
    if set(rows) != set(RELATIONS):
        raise ValueError("relations differ from the schema")
    for relation, table in rows.items():
        types = tuple(int if c in INT_COLUMNS else str for c in RELATIONS[relation][0])
        for row in table:
            if len(row) != len(types) or not all(type(v) is t for v, t in zip(row, types)):
                raise ValueError(f"a {relation} row does not fit its columns")
        facts.rows[relation] = [tuple(row) for row in table]
    return facts


# what each kind of entry holds: (to a JSON value and texts, from them with checks)
_CODECS: dict[str, tuple[Callable, Callable]] = {
    "tables": (_encode_tables, _decode_tables),
    "facts": (lambda facts: ({"path": facts.path, "rows": facts.rows}, []), _decode_facts),
    "summary": (lambda summary: (list(summary), []), lambda value, _texts: from_plain(tuple[int, int, int], value)),
    # the matches, and the warnings about functions no rule may match in
    "matches": (lambda found: (to_plain(found), []),
                lambda value, _texts: from_plain(tuple[list[Match], list[Diagnostic], list[NearMiss], list[LentCtor], list[str],
                                                                   list[str], list[str]],
                                                 value)),
}


def _programs(program: str, matches: bool) -> tuple[tuple[Path, ...], str]:
    """The programs and extra program text of one file's clingo run."""
    programs = (MAIN_PROGRAM, *MATCH_PROGRAMS) if matches else (MAIN_PROGRAM,)
    return programs, program if matches else ""


def _plan(program: str, summary: bool, matches: bool, layout: bool, explain: bool) -> tuple:
    """The programs, program text, parts and kept relations of a clingo run for the summary
    and/or the matches (the analyses, and so the summary, do not depend on the rules)."""
    programs, extra = _programs(program, matches)
    parts = forward_structure_parts(SUMMARY_MAX_GUARDS) if summary else []
    if matches and layout:
        parts = [*parts, LAYOUT_PART]
    if matches and explain:
        parts = [*parts, EXPLAIN_PART]
    keep = (REPORTED | PROJECT if matches else set()) | (_SUMMARY if summary else set())
    return programs, extra, parts, keep


def _outputs(model, facts: FileFacts, rules, summary: bool, matches: bool, layout: bool, explain: bool) -> dict:
    """The summary and/or the matches (with their warnings and near misses) of one file's model."""
    out = {}
    if summary:
        structures, skipped = count_structures(model)
        out["summary"] = (len(model.ids("dl_node")), structures, skipped)
    if matches:
        found = matches_from_model(model, facts, rules, layout)
        out["matches"] = (found, unmodelled_warnings(model, facts),
                          near_misses_from_model(model, facts, rules, found) if explain else [],
                          *project_from_model(model, facts))
    return out


def _solve(facts: FileFacts, request: Request, summary: bool, matches: bool) -> dict:
    """One clingo run for the core summary and/or the rules' matches (with their layouts)."""
    programs, extra, parts, keep = _plan(request.program, summary, matches, request.layout, request.explain)
    model = solve(facts, extra_program=extra, parts=parts, programs=programs, keep=keep, variant=request.variant)
    return _outputs(model, facts, request.rules, summary, matches, request.layout, request.explain)


def _solve_batch(all_facts: list[FileFacts], request: Request, summary: bool, matches: bool) -> list[dict]:
    """`_solve` of several files in one clingo run."""
    programs, extra, parts, keep = _plan(request.program, summary, matches, request.layout, request.explain)
    models = batch.solve(all_facts, extra_program=extra, parts=parts, programs=programs, keep=keep,
                         variant=request.variant)
    return [_outputs(model, facts, request.rules, summary, matches, request.layout, request.explain)
            for model, facts in zip(models, all_facts)]


def run_files(files: list[Path], request: Request, jobs: int | None = None,
              progress: Callable[[Iterable, int], Iterable] | None = None, limits: Limits = Limits(),
              modules: ModuleNames = ModuleNames(), lent: list[tuple[LentCtor, ...]] | None = None,
              used: list[tuple[str, ...]] | None = None) -> tuple[list[FileAnalysis], list[Diagnostic]]:
    """Analyse `files` as `request` asks (in parallel when there are several and `jobs`
    allows), each as the module `modules` names, with what other files of the project lend it
    and which of its globals they import (`lent`, `used`: one tuple per file,
    adopter/matches/project.py). A file over `limits` fails alone: with a
    limit, every file is analysed in a child process, which the limit stops. Returns each
    file's analysis and the run's own problems (a cache that cannot be used or written: one
    warning, the run goes on)."""
    program, rules, cache = request.program, request.rules, request.cache
    jobs = jobs or os.cpu_count() or 1
    # largest files first, so no worker is left with a big file at the end; results are
    # returned in the callers' order
    order = sorted(range(len(files)), key=lambda i: -_size(files[i])) if jobs > 1 else list(range(len(files)))
    tasks = [FileTask(files[i], modules.of(files[i]), request, lent[i] if lent else (), used[i] if used else ())
             for i in order]
    # cache hits are answered here; only the misses go to worker processes (or run here,
    # when there is one: forking for it costs more than it saves)
    hits = {} if cache.folder is None else {i: analyse_file(task, only_cached=True) for i, task in zip(order, tasks)}
    todo = [(i, task) for i, task in zip(order, tasks) if hits.get(i) is None]
    failed_batches: list[tuple] = []
    if todo and (limits or jobs > 1 and len(todo) > 1):
        units = _units([task for _, task in todo], rules is not None or request.want_summary)
        # every fork starts from a control with the programs already loaded (for a file that
        # misses all it asks for, as in a cold run; another file loads its own); for one fork,
        # loading them there costs less than here, where reading which relations they define
        # comes on top (a rescan after one file changed: 0.66 s against 0.87 s on the zoo)
        if len(units) > 1:
            prepare(*_programs(program, rules is not None))
        if any(len(unit) > 1 for unit in units):  # its text now, once; each batch's fork loads it
            batch.program(*_programs(program, rules is not None))
        computed = _forked([task for _, task in todo], units, min(jobs, len(units)), limits, failed_batches)
    else:
        computed = enumerate(analyse_file(task) for _, task in todo)
    positions: list[int] = []

    def stream():
        for position, result in _merge(order, hits, [i for i, _ in todo], computed):
            positions.append(position)
            yield result

    done = list(progress(stream(), len(files)) if progress else stream())
    results: list[FileAnalysis] = [None] * len(files)  # type: ignore[list-item]
    for position, result in zip(positions, done):
        results[position] = result
    problem = cache.problem or next((r.cache_problem for r in results if r.cache_problem), None)
    problems = [Diagnostic(str(cache.requested), None, None, problem, "warning")] if problem else []
    if failed_batches:  # (each file was analysed again alone: its own result says whether it fails)
        problems.append(Diagnostic(str(failed_batches[0][0]), None, None,
                                   f"{len(failed_batches)} batch(es) of small files failed and were analysed file by "
                                   f"file; the first, of {failed_batches[0][1]} files from this one: "
                                   f"{failed_batches[0][2]}", "warning"))
    return results, problems


def _merge(order: list[int], hits: dict, todo: list[int], computed):
    """(position, result) for every file: cache hits first, then computed results as they
    come (`computed` yields (index into `todo`, result))."""
    for i in order:
        if hits.get(i) is not None:
            yield i, hits[i]
    for k, result in computed:
        yield todo[k], result


# Small files are analysed several to a clingo run (`analyse_batch`): most of a small file's
# analysis is what every run pays before any fact, and a fork per file costs its page faults.
# A run slows as it holds more symbols, so a batch stops at BATCH_FILES files or BATCH_BYTES
# of source, and a larger file runs alone. With fewer than BATCH_MIN_FILES small files, none is
# batched: writing the batch programs (`batch.program`) would cost more than it saves. Sizes
# measured on the zoo, timm and diffusers (docs/performance.md).
BATCH_FILE_BYTES = 48 * 1024
BATCH_BYTES = 192 * 1024
BATCH_FILES = 32
BATCH_MIN_FILES = 16


def _units(tasks: list, solving: bool) -> list[list[int]]:
    """The tasks (positions in `tasks`, largest file first) each fork runs: one file, or a
    batch of small ones, when clingo is to run at all (`solving`)."""
    small = [i for i, task in enumerate(tasks) if solving and _size(task.path) <= BATCH_FILE_BYTES]
    if len(small) < BATCH_MIN_FILES:
        return [[i] for i in range(len(tasks))]
    batched = set(small)
    units = [[i] for i in range(len(tasks)) if i not in batched]
    unit, size = [], 0
    for i in small:
        unit.append(i)
        size += _size(tasks[i].path)
        if len(unit) == BATCH_FILES or size >= BATCH_BYTES:
            units.append(unit)
            unit, size = [], 0
    return units + [unit] if unit else units


def _forked(tasks: list, units: list[list[int]], workers: int, limits: Limits, failed_batches: list):
    """(position in `tasks`, result) of `_analyse` over tasks as they finish, each unit of
    `_units` in a fresh fork (adopter/support/forks.py says why); a worker that dies or breaks a
    limit fails its file only: the files of a batch that fails are analysed again, each alone,
    and the batch is added to `failed_batches` (its first file, its size, why it failed)."""
    again = []
    for index, ok, value in map_forked(_analyse_unit_and_exit, [[tasks[i] for i in unit] for unit in units],
                                       workers, limits):
        if ok:
            yield from zip(units[index], value)
        elif len(units[index]) > 1:
            again += units[index]
            failed_batches.append((tasks[units[index][0]].path, len(units[index]),
                                   _failure(tasks[units[index][0]], value).diagnostics[0].message))
        else:
            yield units[index][0], _failure(tasks[units[index][0]], value)
    if again:
        for index, ok, value in map_forked(_analyse_unit_and_exit, [[tasks[i]] for i in again], workers, limits):
            yield again[index], value[0] if ok else _failure(tasks[again[index]], value)


def _failure(task: FileTask, why) -> FileAnalysis:
    path = str(task.path)
    return FileAnalysis(path, [Diagnostic(path, None, None, failure_reason(why, "analysis"))])


def _analyse_unit_and_exit(tasks: list[FileTask]) -> list[FileAnalysis]:
    retain_controls()  # this process ends with its files
    return [analyse_file(tasks[0])] if len(tasks) == 1 else analyse_batch(tasks)


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return 0
