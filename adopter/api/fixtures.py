"""`adopter test`: a rule's fixture checked against its annotations, as `semgrep --test` does.

A rule `<id>.adopt` (with its other shapes `<id>.<shape>.adopt`) has its fixture `<id>.py` beside
it. In the fixture, `# match: <id>` on the line before a statement says the rule reports that
statement's line (twice annotated: two matches there); `# no-match: <id>` says it must not;
`# todo-match: <id>` is a known miss, which fails once it is found (promote it to `# match`).
Comment lines between an annotation and its statement are skipped. Every reported line must be
annotated `# match`. The bundled rules' fixtures are checked the same way
(tests/rules/test_rule_fixtures.py).
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from adopter.extract.sources import facts_of_file
from adopter.matches.build import scan_facts
from adopter.records import AdopterError, Diagnostic
from adopter.rules.model import Rule
from adopter.rules.registry import load_rules

ANNOTATION = re.compile(r"#\s*(match|no-match|todo-match):\s*([\w,\s]+)$")


def annotations(path: Path, rule_id: str) -> dict[str, Counter]:
    """kind -> the lines (1-based) the annotations for `rule_id` point at (the next line that is
    not a comment), each as often as it is annotated."""
    lines = path.read_text(encoding="utf-8").splitlines()
    found: dict[str, Counter] = {"match": Counter(), "no-match": Counter(), "todo-match": Counter()}
    for index, text in enumerate(lines):
        annotation = ANNOTATION.search(text.strip())
        if annotation and rule_id in {r.strip() for r in annotation.group(2).split(",")}:
            target = index + 1
            while target < len(lines) and lines[target].strip().startswith("#"):
                target += 1
            found[annotation.group(1)][target + 1] += 1
    return found


@dataclass
class FixtureResult:
    """One rule's fixture: what its annotations and the scan disagree on, as diagnostics."""

    rule: str
    fixture: Path
    failures: list[Diagnostic] = field(default_factory=list)
    checked: int = 0  # annotations checked

    @property
    def passed(self) -> bool:
        return not self.failures


def check_fixture(fixture: Path, rules: list[Rule]) -> FixtureResult:
    """`fixture` scanned with `rules` (the shapes of one rule) against its annotations."""
    rule_id = rules[0].id
    result = FixtureResult(rule_id, fixture)
    facts, problem = facts_of_file(fixture)
    if facts is None or (problem is not None and problem.severity == "error"):
        result.failures.append(problem or Diagnostic(str(fixture), None, None, "cannot be analysed"))
        return result
    expected = annotations(fixture, rule_id)
    result.checked = sum(sum(c.values()) for c in expected.values())
    reported = Counter(m.line for m in scan_facts(facts, rules))

    def fail(line: int, message: str) -> None:
        result.failures.append(Diagnostic(str(fixture), line, None, f"{rule_id}: {message}"))

    for line, count in sorted((expected["match"] - reported).items()):
        fail(line, f"annotated `# match` ({count}x) but not reported" if count > 1 else
             "annotated `# match` but not reported")
    for line in sorted(reported.keys() & expected["no-match"].keys()):
        fail(line, "reported at a `# no-match` annotation")
    for line in sorted(reported.keys() & expected["todo-match"].keys()):
        fail(line, "a `# todo-match` is found now: make it `# match`")
    for line in sorted((reported - expected["match"]).keys() - expected["todo-match"].keys()):
        fail(line, "reported without a `# match` annotation (or more often than annotated)")
    return result


def check_rules(paths: list[str]) -> list[FixtureResult]:
    """Each rule under `paths` (`.adopt` files, or folders of them) with its fixture checked; a
    rule without a fixture is an error."""
    files: list[Path] = []
    for raw in paths:
        path = Path(raw)
        if path.is_dir():
            files += sorted(path.rglob("*.adopt"))
        elif path.is_file():
            files.append(path)
        else:
            raise AdopterError(Diagnostic(raw, None, None, "no such file or directory"))
    if not files:
        raise AdopterError(Diagnostic(" ".join(paths), None, None, "no .adopt rule files found"))
    by_rule: dict[tuple[Path, str], list[Path]] = {}
    for path in files:
        by_rule.setdefault((path.parent, path.name.split(".")[0]), []).append(path)
    results = []
    for (folder, rule_id), rule_files in sorted(by_rule.items()):
        fixture = folder / f"{rule_id}.py"
        if not fixture.is_file():
            results.append(FixtureResult(rule_id, fixture, [Diagnostic(str(rule_files[0]), None, None,
                                                                       f"{rule_id}: no fixture {fixture.name} beside it")]))
            continue
        results.append(check_fixture(fixture, load_rules([str(f) for f in sorted(rule_files)], cache_dir=None)))
    return results
