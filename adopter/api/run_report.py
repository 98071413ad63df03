"""What a run over many files returns: each file's analysis, plus the path problems."""

from __future__ import annotations

from dataclasses import dataclass, field

from adopter.records import Diagnostic


@dataclass
class RunReport:
    files: list = field(default_factory=list)  # of adopter.matches.pipeline.FileAnalysis
    problems: list[Diagnostic] = field(default_factory=list)  # not of one file: bad paths, the cache
    seconds: float = 0.0

    @property
    def diagnostics(self) -> list[Diagnostic]:
        return self.problems + [d for f in self.files for d in f.diagnostics]

    @property
    def failed(self) -> int:
        return sum(1 for d in self.diagnostics if d.severity == "error")

    @property
    def matches(self) -> list:
        return [m for f in self.files for m in (f.matches or [])]

    @property
    def ignored(self) -> list:
        """The matches a `# adopter: ignore` on their line keeps out of `matches`."""
        return [m for f in self.files for m in f.ignored]

    @property
    def unused_ignores(self) -> list[tuple[str, int, str]]:
        """(file, line, rule ids or "" for every rule) of each `# adopter: ignore` that kept nothing out."""
        return [(f.path, line, ids) for f in self.files for line, ids in f.unused_ignores]

    @property
    def near_misses(self) -> list:
        return [m for f in self.files for m in (f.near_misses or [])]

    @property
    def all_facts(self) -> list:
        return [f.facts for f in self.files if f.facts is not None]

    @property
    def fact_count(self) -> int:
        return sum(f.fact_count for f in self.files)

    def total(self, index: int) -> int:
        """Sum of one field of the per-file core summaries (DL nodes, structures, skipped)."""
        return sum(f.summary[index] for f in self.files if f.summary)
