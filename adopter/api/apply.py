"""`adopter apply`: scan, patch each file with its matches, then show or write the result
(docs/rewriting.md). Nothing is written unless asked; writes are atomic.
"""

from __future__ import annotations

import dataclasses
import difflib
import json
import os
import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterable

from adopter.support.atomic import atomic_write_text, refuse_read_only
from adopter.support.cache import DEFAULT_DIR as DEFAULT_CACHE, ResultCache, entry_key, rewrite_fingerprint
from adopter.support.plain import from_plain, to_plain
from adopter.records import Diagnostic, FilePatch
from adopter.support.forks import Limits, failure_reason, map_forked
from adopter.records import Match
from adopter.api.scan import scan
from adopter.extract.sources import ModuleNames, decode_source, read_bytes, source_encoding
from adopter.extract.walk import Selection
from adopter.rules.model import Rule


@dataclass
class ApplyReport:
    patches: list[FilePatch] = field(default_factory=list)  # changed or not
    diagnostics: list[Diagnostic] = field(default_factory=list)
    seconds: float = 0.0

    @property
    def failed(self) -> int:
        return sum(1 for d in self.diagnostics if d.severity == "error")

    @property
    def applied(self) -> int:
        return sum(len(p.applied) for p in self.patches)

    @property
    def refused(self) -> list[tuple[Match, str]]:
        return [r for p in self.patches for r in p.refused]


@dataclass(frozen=True)
class PatchTask:
    """One file to rewrite: its matches (scanned with their layouts), the rules they are of,
    the kernel set, and whether renamed parameters are also saved under their old names."""

    path: str
    matches: list[Match]
    rules: list[Rule]
    kernels: str = "default"
    save_original_names: bool = False
    package: str = ""  # the file's top-level package: its imports are the file's own
    data: bytes | None = None  # the file's bytes, read once (None: read them when patching)


def patch_file(task: PatchTask):
    """A file's FilePatch, or a Diagnostic when it cannot be read or the rewriter fails."""
    from adopter.rewrite.patch import patch_source  # imported in the worker: libcst is not needed to scan

    path = task.path
    data, problem = (task.data, None) if task.data is not None else read_bytes(Path(path))
    if problem:
        return problem
    text, problem = decode_source(data, Path(path))
    if problem:
        return problem
    try:
        patch = patch_source(path, text, task.matches, {r.key: r for r in task.rules}, task.kernels,
                             task.save_original_names, task.package)
    except Exception as error:  # a rewriter bug must not stop the other files
        return Diagnostic(path, None, None, f"internal error while patching: {type(error).__name__}: {error}")
    patch.encoding = source_encoding(data)
    return patch


def _patch_key(task: PatchTask) -> str:
    """The cache key of a file's patch: the bytes it is patched from (`task.data`), its matches
    and their rules, the kernel set, and the rewriter's code."""
    used = sorted({match.rule_key for match in task.matches})
    rules = [rule for rule in task.rules if rule.key in used]
    return entry_key(task.data, "patch", rewrite_fingerprint(), task.path, task.kernels, str(task.save_original_names), task.package,
                     json.dumps(to_plain(task.matches), sort_keys=True), json.dumps(to_plain(rules), sort_keys=True))


def _encode_patch(patch: FilePatch) -> tuple[dict, list[str]]:
    """A patch as a cache entry: the records as JSON, the two texts apart (raw, not escaped)."""
    return to_plain(dataclasses.replace(patch, original="", patched="")), [patch.original, patch.patched]


def _decode_patch(value, texts: list[str]) -> FilePatch:
    original, patched = texts
    return dataclasses.replace(from_plain(FilePatch, value), original=original, patched=patched)


def _not_patched(path: str, why) -> Diagnostic:
    """A file whose rewriting worker died or broke a limit."""
    return Diagnostic(path, None, None, failure_reason(why, "rewrite"))


def plan_patches(paths: list[str], rules: list[Rule], jobs: int | None = None,
                 progress: Callable[[Iterable, int], Iterable] | None = None,
                 cache_dir: Path | None = DEFAULT_CACHE, kernels: str = "default",
                 save_original_names: bool = False, limits: Limits = Limits(),
                 modules: ModuleNames = ModuleNames(), selection: Selection = Selection(),
                 drop: Callable[[Match], bool] | None = None) -> ApplyReport:
    """Scan `paths` (each file within `limits`, named as `modules` says) and compute every
    file's patch, in memory, with the kernel set `kernels` (adopter/rewrite/kernel_sets.py)."""
    scanned = scan(paths, rules, jobs=jobs, progress=progress, cache_dir=cache_dir, limits=limits, layout=True,
                   modules=modules, selection=selection, drop=drop)
    return patch_scanned(scanned, rules, jobs, progress, cache_dir, kernels, save_original_names, limits, modules)


def patch_scanned(scanned, rules: list[Rule], jobs: int | None = None,
                  progress: Callable[[Iterable, int], Iterable] | None = None,
                  cache_dir: Path | None = DEFAULT_CACHE, kernels: str = "default",
                  save_original_names: bool = False, limits: Limits = Limits(),
                  modules: ModuleNames = ModuleNames()) -> ApplyReport:
    """Every file's patch from a scan made with `layout=True` (`plan_patches` without the scan)."""
    report = ApplyReport(diagnostics=list(scanned.diagnostics), seconds=scanned.seconds)
    cache = ResultCache(cache_dir)
    tasks = [PatchTask(f.path, f.matches, rules, kernels, save_original_names, modules.of(Path(f.path)).split(".")[0])
             for f in scanned.files if f.matches]
    # a file patched before with the same bytes, matches, rules and rewriter is read back: a
    # preview that follows a scan (`apply --diff`) costs what the scan's cache hit costs
    # (the key and the patch come from one read of the file: a file changed in between cannot
    # have its patch stored under the key of the bytes before)
    keys: dict[str, str] = {}
    if cache.folder is not None:
        read = []
        for task in tasks:
            data, problem = read_bytes(Path(task.path))
            if problem:
                report.diagnostics.append(problem)
                continue
            read.append(dataclasses.replace(task, data=data))
            keys[task.path] = _patch_key(read[-1])
        tasks = read
    work = []
    for task in tasks:
        cached = cache.get(keys[task.path], "patch", _decode_patch) if task.path in keys else None
        if cached is not None and cached.path == task.path:
            report.patches.append(cached)
        else:
            work.append(task)
    work.sort(key=lambda task: -Path(task.path).stat().st_size)  # largest first keeps the workers busy
    # the same pool as the analysis (adopter/support/forks.py): each file in a fresh fork within
    # `limits`, which ends with this process however it ends; one file here needs no fork
    jobs = jobs or os.cpu_count() or 1
    if len(work) > 1 and jobs > 1 or work and limits:
        results: Iterable = (value if ok else _not_patched(work[index].path, value)
                             for index, ok, value in map_forked(patch_file, work, jobs, limits))
    else:
        results = map(patch_file, work)
    if progress is not None:
        results = progress(results, len(work))
    failures, cache_problems = [], set()
    for result in results:
        if isinstance(result, Diagnostic):
            failures.append(result)
            continue
        report.patches.append(result)
        if keys.get(result.path):
            cache_problems.add(cache.put(keys[result.path], "patch", *_encode_patch(result)))
    report.diagnostics += [Diagnostic("", None, None, problem, severity="warning")
                           for problem in sorted(cache_problems - {None})[:1]]
    # (in the files' order, whatever order the workers finished in)
    report.diagnostics += sorted(failures, key=lambda diagnostic: diagnostic.file)
    report.patches.sort(key=lambda p: p.path)
    return report


def unified_diff(patch) -> str:
    name = Path(patch.path).as_posix().lstrip("/")
    return "".join(difflib.unified_diff(patch.original.splitlines(keepends=True), patch.patched.splitlines(keepends=True),
                                        fromfile=f"a/{name}", tofile=f"b/{name}"))


def output_base(roots: list[str]) -> Path:
    """The folder `--out` and `--patches` name files below: the common parent of the
    arguments (a directory as itself, a file as its folder), so that files of two arguments
    (`a/m.py`, `b/m.py`) keep apart (`OUT/a/m.py`, `OUT/b/m.py`); one directory argument is
    its own base (`OUT/m.py`). Paths are taken as written, symlinks unresolved."""
    folders = [Path(os.path.abspath(root)) for root in roots]
    return Path(os.path.commonpath([f if f.is_dir() else f.parent for f in folders]))


def output_name(path: str, base: Path) -> Path:
    """Where a file goes below `--out` or `--patches`: its path below `base` (`output_base`)."""
    return Path(os.path.abspath(path)).relative_to(base)


@dataclass
class Written:
    """What `write_patches` did: the files it wrote (patched files and copies; not diffs),
    the patches it could not write, and whether an interruption stopped it."""

    files: list[str] = field(default_factory=list)
    failures: list[Diagnostic] = field(default_factory=list)
    interrupted: bool = False


def write_patches(report: ApplyReport, roots: list[str], write: bool = False, out: Path | None = None,
                  patches: Path | None = None, backup: bool = False,
                  show_diff: Callable[[str], None] | None = None, copy_all: bool = False) -> Written:
    """Write each changed file's patch: in place (`write`, atomically, also keeping `FILE.orig`
    with `backup`), as a copy under `out`, as a `.diff` under `patches` (paths below the
    arguments' common folder, `output_base`), and hand each diff to `show_diff`. With
    `copy_all`, `out` first gets a copy of every file under the arguments, so that it holds a
    complete tree. A file that cannot be written is one diagnostic and the others go on; an
    interruption (Ctrl-C, SIGTERM) stops after the file being written, and the result says
    which were."""
    done = Written()
    base = output_base(roots)
    try:
        if out is not None and copy_all:
            done.failures += _copy_tree(roots, base, out)
        for patch in (p for p in report.patches if p.changed):
            text = unified_diff(patch)
            if show_diff is not None:
                show_diff(text)
            try:
                if patches is not None:
                    atomic_write_text(patches / output_name(patch.path, base).with_suffix(".diff"), text, patch.encoding)
                if out is not None:
                    atomic_write_text(out / output_name(patch.path, base), patch.patched, patch.encoding)
                    done.files.append(str(out / output_name(patch.path, base)))
                if write:
                    write_in_place(patch, backup)
                    done.files.append(patch.path)
            except (OSError, UnicodeEncodeError) as error:
                done.failures.append(Diagnostic(patch.path, None, None, f"not written: {_write_error_reason(error)}"))
    except KeyboardInterrupt:
        done.interrupted = True
    return done


def _copy_tree(roots: list[str], base: Path, out: Path) -> list[Diagnostic]:
    """Copy every file under the arguments (a file argument: itself) to its place under `out`,
    keeping its mode; the files that cannot be copied, one diagnostic each."""
    failures = []
    for root in roots:
        top = Path(os.path.abspath(root))
        files = [top] if not top.is_dir() else [Path(folder) / name for folder, _dirs, names in os.walk(top)
                                                 for name in names]
        for source in files:
            target = out / source.relative_to(base)
            try:
                target.parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(source, target)
            except OSError as error:
                failures.append(Diagnostic(str(source), None, None, f"not copied: {_write_error_reason(error)}"))
    return failures


def _write_error_reason(error: Exception) -> str:
    """Why a write failed, in a few words."""
    if isinstance(error, UnicodeEncodeError):
        return f"the patched text does not fit the file's encoding {error.encoding}"
    return error.strerror or str(error) if isinstance(error, OSError) else str(error)


def write_in_place(patch, backup: bool) -> None:
    """Replace the file (its target, for a symlink) with the patched text, in its own
    encoding, keeping its mode and owner; first `FILE.orig` (with the same mode and owner)
    unless one exists. A read-only file is refused (OSError), before either is written."""
    path = Path(patch.path)
    refuse_read_only(path)
    if backup:
        saved = Path(patch.path + ".orig")
        if not saved.exists():  # a second run keeps the first original
            atomic_write_text(saved, patch.original, patch.encoding, attributes_of=path)
    atomic_write_text(path, patch.patched, patch.encoding)
