"""The rules a run uses: bundled ones by id or pack, or `.adopt` files; what each finds; the
Datalog each compiles to."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from adopter.rules.compiler import compile_rule
from adopter.rules.model import Rule, what_it_does
from adopter.rules.registry import load_rules
from adopter.support.cache import DEFAULT_DIR

__all__ = ["Rule", "RuleSummary", "load_rules", "list_rules", "rule_source", "rules_markdown", "DEFAULT_DIR"]



@dataclass(frozen=True)
class RuleSummary:
    key: str   # `<id>`, or `<id>.<shape>` for another code shape of a rule
    pack: str  # the folder it comes from (`--rules PACK` selects it)
    summary: str  # the header's "What it does" line


def list_rules() -> list[RuleSummary]:
    """The bundled rules, one entry per rule file."""
    return [RuleSummary(rule.key, Path(rule.path).parent.name, what_it_does(rule.doc)) for rule in load_rules()]


def rules_markdown() -> str:
    """The bundled rules as a Markdown table, one row per rule (its main file's header),
    with the number of its other code shapes: the README's table."""
    rules = list_rules()
    shapes = {r.key: sum(1 for s in rules if s.key.startswith(r.key + ".")) for r in rules if "." not in r.key}
    rows = ["| rule | pack | finds |", "|---|---|---|"]
    for rule in sorted((r for r in rules if "." not in r.key), key=lambda r: (r.pack != "paper", r.pack, r.key)):
        count = shapes[rule.key]
        more = f" (+{count} shape{'s' if count > 1 else ''})" if count else ""
        rows.append(f"| `{rule.key}`{more} | `{rule.pack}` | {rule.summary.replace('|', chr(92) + '|')} |")
    return "\n".join(rows) + "\n"


def rule_source(selector: str, datalog: bool = False) -> str:
    """A rule's text (each of its files, for a rule of several shapes), or the Datalog it
    compiles to. Raises AdopterError for an unknown rule."""
    rules = load_rules([selector])
    return "\n".join(compile_rule(rule) if datalog else Path(rule.path).read_text() for rule in rules)
