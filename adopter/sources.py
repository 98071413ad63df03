"""Reading source files safely: paths to files, bytes to text, text to facts.

Every failure becomes a `Diagnostic` (file, line when known, reason) instead of an
exception, so one bad file never stops the others.
"""

from __future__ import annotations

from pathlib import Path

from adopter.diagnostics import Diagnostic
from extractor.python_facts import FileFacts, extract_source

MAX_FILE_BYTES = 5 * 1024 * 1024  # the largest zoo file is ~0.2 MB; beyond this is not model code


def expand_paths(paths: list[str]) -> tuple[list[Path], list[Diagnostic]]:
    """Files to analyse (directories searched recursively for `.py`), and path errors."""
    files: list[Path] = []
    problems: list[Diagnostic] = []
    for raw in paths:
        path = Path(raw)
        if path.is_dir():
            found = sorted(p for p in path.rglob("*.py") if p.is_file())
            if not found:
                problems.append(Diagnostic(raw, None, None, "directory contains no Python files"))
            files.extend(found)
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


def decode_source(data: bytes, path: Path) -> tuple[str | None, Diagnostic | None]:
    try:
        return data.decode("utf-8"), None
    except UnicodeDecodeError as error:
        line = data[: error.start].count(b"\n") + 1
        return None, Diagnostic(str(path), line, None, f"not UTF-8 (byte 0x{data[error.start]:02x} at offset {error.start})")


def extract_text(text: str, path: Path) -> tuple[FileFacts | None, Diagnostic | None]:
    """Facts of decoded source; a diagnostic says why not (or warns, with facts)."""
    try:
        facts = extract_source(text, str(path))
        if not text.strip():
            return facts, Diagnostic(str(path), None, None, "empty file: nothing to analyse", "warning")
        return facts, None
    except SyntaxError as error:
        return None, Diagnostic(str(path), error.lineno, error.offset, f"syntax error: {error.msg}")
    except (ValueError, RecursionError) as error:  # null bytes, absurd nesting
        return None, Diagnostic(str(path), None, None, f"cannot parse: {error}")


def facts_of_file(path: Path) -> tuple[FileFacts | None, Diagnostic | None]:
    """Read, decode and extract one file; a diagnostic says why not (or warns, with facts)."""
    data, problem = read_bytes(path)
    if problem:
        return None, problem
    text, problem = decode_source(data, path)
    if problem:
        return None, problem
    return extract_text(text, path)
