"""Which `.py` files a folder argument holds for a scan: all of them, less what a user would not
call their code: a Python environment (a folder holding `pyvenv.cfg`: `.venv/` with torch in
it), version-control and tool caches, what the `.gitignore` files in the folder and below it
ignore (each file's patterns apply below its own folder, with git's pattern syntax: pathspec's
GitIgnoreSpec), and the `--exclude` patterns (the same syntax, relative to the folder argument).
A `.gitignore` above the folder does not apply: `adopter scan hf_models` scans the zoo where the
repository ignores its files, as it was asked to. A file named on the command line is always
scanned.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

import pathspec

from adopter.records import Diagnostic

# folders no one's model code lives in
SKIPPED_FOLDERS = frozenset({".git", ".hg", ".svn", "__pycache__", ".tox", ".nox", ".mypy_cache", ".pytest_cache",
                             ".ruff_cache", "node_modules"})


@dataclass(frozen=True)
class Selection:
    """What a folder argument leaves out: `exclude` patterns, and (with `ignores`, the default)
    environments, VCS and cache folders and what `.gitignore` files ignore."""

    exclude: tuple[str, ...] = ()
    ignores: bool = True
    # patterns relative to a folder of their own (a configuration file's): (folder, patterns)
    exclude_in: tuple[tuple[str, tuple[str, ...]], ...] = ()


def python_files(folder: Path, selection: Selection = Selection()) -> tuple[list[Path], list[Diagnostic]]:
    """The `.py` files under `folder` (symlinked folders are not followed) that `selection` keeps,
    sorted, and one diagnostic per folder that cannot be listed (a warning where it holds Python
    files and `selection` left every one out)."""
    found: list[Path] = []
    problems: list[Diagnostic] = []

    def unreadable(error: OSError) -> None:
        where = error.filename if error.filename is not None else str(folder)
        problems.append(Diagnostic(str(where), None, None, f"cannot read directory: {error.strerror or error}"))

    # (the folder a spec's patterns are relative to, absolute and normalised, and the spec)
    specs: list[tuple[Path, pathspec.GitIgnoreSpec]] = []
    top = _absolute(folder)
    if selection.exclude:
        specs.append((top, pathspec.GitIgnoreSpec.from_lines(selection.exclude)))
    specs += [(_absolute(Path(base)), pathspec.GitIgnoreSpec.from_lines(patterns))
              for base, patterns in selection.exclude_in if patterns]
    if selection.ignores and (spec := _gitignore(top)) is not None:
        specs.append((top, spec))

    def left_out(path: Path, is_dir: bool) -> bool:
        path = _absolute(path)
        for base, spec in specs:
            if path != base and path.is_relative_to(base):
                relative = path.relative_to(base).as_posix()
                if spec.match_file(relative + "/" if is_dir else relative):
                    return True
        return False

    for root, dirs, names in os.walk(folder, onerror=unreadable):
        here = Path(root)
        if selection.ignores and here != folder and (spec := _gitignore(here)) is not None:
            specs.append((_absolute(here), spec))
        dirs[:] = sorted(d for d in dirs if not (selection.ignores and _skipped(here / d))
                         and not left_out(here / d, True))
        found += [here / name for name in names if name.endswith(".py") and (here / name).is_file()
                  and not left_out(here / name, False)]
    if not found and not problems and any(True for _ in _all_python(folder)):
        problems.append(Diagnostic(str(folder), None, None, "every Python file in it is left out (--exclude, "
                                   ".gitignore, environments; --no-ignore scans what is ignored)", "warning"))
    return sorted(found), problems


def _all_python(folder: Path):
    for root, _dirs, names in os.walk(folder):
        yield from (name for name in names if name.endswith(".py"))


def _skipped(folder: Path) -> bool:
    return folder.name in SKIPPED_FOLDERS or (folder / "pyvenv.cfg").is_file()


def _absolute(path: Path) -> Path:
    return Path(os.path.abspath(path))


def _gitignore(folder: Path) -> pathspec.GitIgnoreSpec | None:
    path = folder / ".gitignore"
    try:
        return pathspec.GitIgnoreSpec.from_lines(path.read_text(encoding="utf-8").splitlines())
    except (OSError, UnicodeDecodeError):
        return None
