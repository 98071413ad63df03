"""What an editor asks of one open file (`adopter lsp`, adopter/lsp/server.py): its matches and
near misses for the text in the buffer, saved or not; a rule's header; one match rewritten.

A buffer whose text is the file's on disk is analysed where it is (the cache it shares with
`adopter scan` answers a file nothing changed); unsaved text is analysed as a copy in a folder
of the session's own, under the file's module name, and the results name the file again.
"""

from __future__ import annotations

import dataclasses
import hashlib
import tempfile
from functools import lru_cache
from dataclasses import dataclass, field
from pathlib import Path

from adopter.api.apply import PatchTask, patch_file
from adopter.api.config import find_config
from adopter.api.scan import scan
from adopter.extract.sources import ModuleNames
from adopter.records import Diagnostic, Match, NearMiss
from adopter.rules.model import Rule, what_it_does
from adopter.rules.registry import load_rules
from adopter.support.cache import DEFAULT_DIR as DEFAULT_CACHE


@dataclass
class DocumentReport:
    """One buffer's analysis: matches (with what `rewrite` needs), near misses, diagnostics."""

    matches: list[Match] = field(default_factory=list)
    near_misses: list[NearMiss] = field(default_factory=list)
    diagnostics: list[Diagnostic] = field(default_factory=list)


class Session:
    """An editor's session: the rules the file's repository configures (`[tool.adopter]`, else
    every bundled rule), its kernel set, the cache, and a folder for unsaved buffers."""

    def __init__(self, cache_dir: Path | None = DEFAULT_CACHE, modules: ModuleNames = ModuleNames()):
        self.cache_dir, self.modules = cache_dir, modules
        # (removed when the session is collected or the process exits)
        self._folder = tempfile.TemporaryDirectory(prefix="adopter-buffers-")
        self._buffers = Path(self._folder.name)
        self._rules: dict[Path | None, tuple[list[Rule], str]] = {}

    def rules_for(self, path: Path) -> tuple[list[Rule], str]:
        """The rules and kernel set the configuration that governs `path` selects."""
        config = find_config([str(path)])
        if config.path not in self._rules:
            self._rules[config.path] = config.rules_selected(cache_dir=self.cache_dir), config.kernels or "default"
        return self._rules[config.path]

    def analyse(self, path: Path, text: str) -> DocumentReport:
        """The matches and near misses of `path` holding `text` (each file's own analysis: what
        other files of its project lend it is not looked up here)."""
        rules, _kernels = self.rules_for(path)
        analysed, modules = self._where(path, text)
        found = scan([str(analysed)], rules, jobs=1, cache_dir=self.cache_dir, layout=True, explain=True,
                     modules=modules)
        named = str(path)
        return DocumentReport([dataclasses.replace(m, file=named) for m in found.matches],
                              [dataclasses.replace(m, file=named) for m in found.near_misses],
                              [dataclasses.replace(d, file=named) if d.file == str(analysed) else d
                               for d in found.diagnostics])

    def rewrite(self, path: Path, text: str, match: Match) -> tuple[str | None, str]:
        """`text` with `match` (from `analyse` of that text) rewritten by the configured kernel
        set: (the new text, ""), or (None, why it is not rewritten)."""
        rules, kernels = self.rules_for(path)
        analysed, modules = self._where(path, text)
        task = PatchTask(str(analysed), [dataclasses.replace(match, file=str(analysed))], rules, kernels,
                         package=modules.of(analysed).split(".")[0])
        patch = patch_file(task)
        if isinstance(patch, Diagnostic):
            return None, patch.message
        if patch.refused:
            return None, patch.refused[0][1]
        return (patch.patched, "") if patch.changed else (None, "the rewrite changes nothing")

    def _where(self, path: Path, text: str) -> tuple[Path, ModuleNames]:
        """Where the buffer's text is analysed, and how that file is named: the file itself when
        the buffer is saved, else a copy (one per file) under the file's module name."""
        try:
            if path.read_bytes() == text.encode():
                return path, self.modules
        except OSError:  # a new file, or one deleted since: its buffer is all there is
            pass
        copy = self._buffers / hashlib.sha256(str(path.resolve()).encode()).hexdigest()[:16] / path.name
        copy.parent.mkdir(parents=True, exist_ok=True)
        if not copy.exists() or copy.read_text() != text:
            copy.write_text(text)
        return copy, ModuleNames(self.modules.roots, (*self.modules.names, (str(copy.absolute()), self.modules.of(path))))


@lru_cache(maxsize=None)
def rule_header(rule_id: str) -> str:
    """The header of a rule's main file (its `# What it does:` ... lines), without the comment
    marks: what a hover shows."""
    rules = load_rules([rule_id])
    return next((rule for rule in rules if not rule.shape), rules[0]).doc


def rule_summary(rule_id: str) -> str:
    """The first sentence of a rule's "What it does" (a diagnostic's message)."""
    return what_it_does(rule_header(rule_id))
