"""A repository's settings for Adopter: `[tool.adopter]` in `pyproject.toml`, or the whole of an
`adopter.toml`, found by walking up from the first path given (as ruff finds its own); the
command line wins over it. An unknown key is an error with its file and line.

    [tool.adopter]
    rules = ["modern", "softmax"]       # ids, shape keys, packs or .adopt paths (relative to this file)
    ignore = ["fused_qkv"]              # rule ids (or shape keys) left out of what `rules` selects
    kernels = "torch"                   # apply's kernel set
    exclude = ["third_party/"]          # .gitignore patterns, relative to this file's folder
    module-root = ["src"]               # folders naming the files below them (relative to this file)
    per-file-ignores = {"tests/*" = ["softmax"]}   # glob (relative to this file's folder) -> rule ids
"""

from __future__ import annotations

import fnmatch
import os
import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

from adopter.records import AdopterError, Diagnostic
from adopter.rules.model import Rule
from adopter.rules.registry import load_rules

KEYS = ("rules", "ignore", "kernels", "exclude", "module-root", "per-file-ignores")


@dataclass(frozen=True)
class Config:
    path: Path | None = None  # the file it was read from (None: no configuration)
    rules: tuple[str, ...] = ()
    ignore: tuple[str, ...] = ()
    kernels: str | None = None
    exclude: tuple[str, ...] = ()
    module_root: tuple[Path, ...] = ()
    per_file_ignores: tuple[tuple[str, tuple[str, ...]], ...] = field(default_factory=tuple)

    @property
    def folder(self) -> Path | None:
        return self.path.parent if self.path is not None else None

    def rules_selected(self, selectors: list[str] | None = None, cache_dir: Path | None = None) -> list[Rule]:
        """The rules a run uses: `selectors` (the command line's), else the configuration's
        `rules`, else every bundled rule; less what `ignore` names (by id or shape key).
        Raises AdopterError when `ignore` leaves none."""
        chosen = load_rules(selectors or list(self.rules) or None, cache_dir=cache_dir)
        kept = [r for r in chosen if r.id not in self.ignore and r.key not in self.ignore]
        if not kept:
            raise AdopterError(Diagnostic(str(self.path), None, None, "`ignore` leaves no rule selected"))
        return kept

    def ignores(self, file: str, rule: str, key: str = "") -> bool:
        """Whether `per-file-ignores` leaves rule `rule` (or its shape `key`) out of `file`."""
        if self.folder is None:
            return False
        relative = os.path.relpath(os.path.abspath(file), self.folder.absolute())
        return any(fnmatch.fnmatch(Path(relative).as_posix(), glob) and (rule in ids or key in ids)
                   for glob, ids in self.per_file_ignores)


def find_config(paths: list[str]) -> Config:
    """The configuration for a run over `paths`: the nearest `adopter.toml`, or `pyproject.toml`
    holding `[tool.adopter]`, in the folder of the first path or above it."""
    start = Path(paths[0]) if paths else Path(".")
    folder = (start if start.is_dir() else start.parent).absolute()
    for here in (folder, *folder.parents):
        own = here / "adopter.toml"
        if own.is_file():
            return read_config(own)
        project = here / "pyproject.toml"
        if project.is_file() and re.search(r"^\s*\[tool\.adopter\]", _text(project), re.MULTILINE):
            return read_config(project)
    return Config()


def read_config(path: Path) -> Config:
    text = _text(path)
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        raise AdopterError(Diagnostic(str(path), getattr(error, "lineno", None), None, f"not valid TOML: {error}"))
    table = data.get("tool", {}).get("adopter", {}) if path.name == "pyproject.toml" else data
    header = "[tool.adopter]" if path.name == "pyproject.toml" else ""

    def fail(key: str, message: str):
        raise AdopterError(Diagnostic(str(path), _line_of(text, key, header), None, message))

    for key in table:
        if key not in KEYS:
            fail(key, f"unknown key {key!r} in {header or path.name} (known: {', '.join(KEYS)})")

    def strings(key: str) -> tuple[str, ...]:
        value = table.get(key, [])
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            fail(key, f"{key} must be a list of strings")
        return tuple(value)

    kernels = table.get("kernels")
    if kernels is not None and not isinstance(kernels, str):
        fail("kernels", "kernels must be a string (default, torch or paper)")
    per_file = table.get("per-file-ignores", {})
    if not isinstance(per_file, dict) or not all(isinstance(ids, list) and all(isinstance(i, str) for i in ids)
                                                 for ids in per_file.values()):
        fail("per-file-ignores", "per-file-ignores must map globs to lists of rule ids")
    folder = path.parent
    # rule paths and module roots are relative to the configuration's folder; ids and packs are names
    rules = tuple(str(folder / r) if r.endswith(".adopt") or "/" in r else r for r in strings("rules"))
    return Config(path, rules, strings("ignore"), kernels, strings("exclude"),
                  tuple(folder / r for r in strings("module-root")),
                  tuple((glob, tuple(ids)) for glob, ids in sorted(per_file.items())))


def _text(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        raise AdopterError(Diagnostic(str(path), None, None, f"cannot read configuration: {error}"))


def _line_of(text: str, key: str, header: str) -> int | None:
    """The line of `key = ...` in the table `header` (the whole file when there is none)."""
    inside = not header
    for number, line in enumerate(text.splitlines(), 1):
        stripped = line.strip()
        if stripped.startswith("["):
            inside = stripped == header
        elif inside and re.match(rf"[\"']?{re.escape(key)}[\"']?\s*=", stripped):
            return number
    return None
