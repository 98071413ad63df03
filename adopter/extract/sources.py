"""Reading source files safely: paths to files, bytes to text, text to facts.

Every failure becomes a `Diagnostic` (file, line when known, reason) instead of an
exception, so one bad file never stops the others.
"""

from __future__ import annotations

import io
import sys
import tokenize
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

from adopter.records import AdopterError, Diagnostic
from adopter.extract.python_facts import FileFacts, extract_source
from adopter.extract.walk import Selection, python_files

MAX_FILE_BYTES = 5 * 1024 * 1024  # the largest zoo file is ~0.2 MB; beyond this is not model code


def expand_paths(paths: list[str], selection: Selection = Selection()) -> tuple[list[Path], list[Diagnostic]]:
    """Files to analyse (directories searched recursively for `.py`, less what `selection` leaves
    out: adopter/extract/walk.py), and path errors."""
    files: list[Path] = []
    problems: list[Diagnostic] = []
    for raw in paths:
        path = Path(raw)
        if path.is_dir():
            found, unreadable = python_files(path, selection)
            if not found and not unreadable:  # (one left out entirely has its warning in `unreadable`)
                problems.append(Diagnostic(raw, None, None, "directory contains no Python files"))
            files.extend(found)
            problems.extend(unreadable)
        elif path.is_file():
            files.append(path)
        elif path.exists():
            problems.append(Diagnostic(raw, None, None, "not a regular file"))
        else:
            problems.append(Diagnostic(raw, None, None, "no such file or directory"))
    return files, problems


def read_bytes(path: Path) -> tuple[bytes | None, Diagnostic | None]:
    """The bytes of a source file, or why they cannot be read."""
    try:
        size = path.stat().st_size
        if size > MAX_FILE_BYTES:
            return None, Diagnostic(str(path), None, None, f"file too large ({size} bytes > {MAX_FILE_BYTES})")
        return path.read_bytes(), None
    except OSError as error:
        return None, Diagnostic(str(path), None, None, f"cannot read: {error.strerror or error}")


def source_encoding(data: bytes) -> str:
    """The encoding Python reads a source file in: a PEP 263 coding line, `utf-8-sig` for a
    UTF-8 byte order mark, else UTF-8. Raises SyntaxError for a cookie it cannot use."""
    return tokenize.detect_encoding(io.BytesIO(data).readline)[0]


def decode_source(data: bytes, path: Path) -> tuple[str | None, Diagnostic | None]:
    """Source text as Python reads it (`tokenize.open`), or why it cannot be read."""
    try:
        encoding = source_encoding(data)
    except SyntaxError as error:  # an unknown coding, a BOM beside another coding, or no UTF-8
        if not error.msg.startswith("invalid or missing encoding declaration"):
            return None, Diagnostic(str(path), None, None, f"cannot decode: {error.msg}")
        encoding = "utf-8"  # the decoding error below says where
    try:
        return data.decode(encoding), None
    except UnicodeDecodeError as error:
        line = data[: error.start].count(b"\n") + 1
        name = "UTF-8" if encoding in ("utf-8", "utf-8-sig") else encoding
        return None, Diagnostic(str(path), line, None, f"not {name} (byte 0x{data[error.start]:02x} at offset {error.start})")


def module_name(path: Path, root: Path | None = None) -> str:
    """The dotted name Python imports the file by: with `root`, its path below `root`
    (`src/pkg/mod.py` under `src` is `pkg.mod`); else its package's path from the topmost
    folder holding an `__init__.py` (so `from ..x import y` resolves as Python does); for a
    file outside any package, its stem."""
    if root is not None:
        relative = path.absolute().relative_to(root.absolute()).with_suffix("")
        parts = list(relative.parts[:-1] if relative.name == "__init__" else relative.parts)
        return ".".join(parts)
    folder = path.absolute().parent
    parts = [] if path.stem == "__init__" else [path.stem]
    while _is_package(folder) and folder.name:
        parts.insert(0, folder.name)
        folder = folder.parent
    return ".".join(parts) or path.stem


@dataclass(frozen=True)
class ModuleNames:
    """How each file's dotted module name is found: a name given for it (`names`, by the
    file's absolute path: `--module-map`), else its path below the nearest of `roots` that
    holds it (`--module-root`), else its package folders, else its stem (`module_name`)."""

    roots: tuple[Path, ...] = ()
    names: tuple[tuple[str, str], ...] = ()

    @cached_property
    def _given(self) -> dict[str, str]:
        return dict(self.names)

    def of(self, path: Path) -> str:
        given = self._given.get(str(path.absolute()))
        if given is not None:
            return given
        holding = [root for root in self.roots if path.absolute().is_relative_to(root.absolute())]
        return module_name(path, max(holding, key=lambda root: len(root.absolute().parts)) if holding else None)

    @classmethod
    def read_map(cls, table: Path, roots: tuple[Path, ...] = ()) -> "ModuleNames":
        """A module map: a TSV file with the header `file<TAB>module` and one row per file, a
        relative `file` being relative to the table's folder. Raises AdopterError at a bad row."""
        try:
            lines = table.read_text(encoding="utf-8").splitlines()
        except (OSError, UnicodeDecodeError) as error:
            raise AdopterError(Diagnostic(str(table), None, None, f"cannot read the module map: {error}")) from None
        if not lines or lines[0].split("\t") != ["file", "module"]:
            raise AdopterError(Diagnostic(str(table), 1, None, "a module map starts with the header `file<TAB>module`"))
        names = []
        for number, line in enumerate(lines[1:], 2):
            fields = line.split("\t")
            if len(fields) != 2 or not all(fields) or not all(part.isidentifier() for part in fields[1].split(".")):
                raise AdopterError(Diagnostic(str(table), number, None,
                                              "expected `file<TAB>dotted.module.name` (two columns)"))
            names.append((str((table.parent / fields[0]).absolute()), fields[1]))
        return cls(roots, tuple(names))


def _is_package(folder: Path) -> bool:
    try:
        return (folder / "__init__.py").is_file()
    except OSError:  # a folder we may not search is no package we can read
        return False


def extract_text(text: str, path: Path, module: str | None = None) -> tuple[FileFacts | None, Diagnostic | None]:
    """Facts of decoded source (`module`: its dotted name, default `module_name(path)`); a
    diagnostic says why not (or warns, with facts)."""
    try:
        facts = extract_source(text, str(path), module or module_name(path))
        if not text.strip() and path.name != "__init__.py":  # (an empty `__init__.py` marks a package: normal)
            return facts, Diagnostic(str(path), None, None, "empty file: nothing to analyse", "warning")
        return facts, None
    except SyntaxError as error:
        # (the running interpreter's grammar decides: name it, for code written for a newer one)
        version = f"Python {sys.version_info.major}.{sys.version_info.minor}"
        return None, Diagnostic(str(path), error.lineno, error.offset, f"syntax error ({version}): {error.msg}")
    except (ValueError, RecursionError) as error:  # null bytes, absurd nesting
        return None, Diagnostic(str(path), None, None, f"cannot parse: {error}")


def facts_of_file(path: Path | str, module: str | None = None) -> tuple[FileFacts | None, Diagnostic | None]:
    """Read, decode and extract one file (as the module `module`, default `module_name(path)`);
    a diagnostic says why not (or warns, with facts)."""
    path = Path(path)
    data, problem = read_bytes(path)
    if problem:
        return None, problem
    text, problem = decode_source(data, path)
    if problem:
        return None, problem
    return extract_text(text, path, module)
