"""Render scan matches: JSON lines (DESIGN.md §5), SARIF 2.1.0, or a table for people."""

from __future__ import annotations

import json

from adopter.scan import Match
from rules.model import Rule

SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"


def render_matches(matches: list[Match], fmt: str, rules: list[Rule]) -> str:
    if fmt == "jsonl":
        return "".join(json.dumps(m.to_json(), sort_keys=False) + "\n" for m in matches)
    if fmt == "sarif":
        return json.dumps(sarif(matches, rules), indent=2) + "\n"
    return table(matches)


def table(matches: list[Match]) -> str:
    if not matches:
        return "no matches\n"
    rows = [("LOCATION", "RULE", "CLASS.FUNCTION", "PATH")]
    for m in matches:
        path = ", ".join(("" if p["holds"] else "not ") + p["condition"] for p in m.path)
        rows.append((f"{m.file}:{m.line}", m.rule, f"{m.class_}.{m.function}", path or "-"))
    widths = [max(len(r[i]) for r in rows) for i in range(3)]
    return "".join("  ".join(c.ljust(w) for c, w in zip(r[:3], widths)) + "  " + r[3] + "\n" for r in rows)


def sarif(matches: list[Match], rules: list[Rule]) -> dict:
    """A SARIF 2.1.0 log: one run, one reporting descriptor per rule, one result per match."""
    descriptors = [{"id": r.id, "name": r.id,
                    "shortDescription": {"text": (r.doc.splitlines() or [r.id])[0].removeprefix("What it does:").strip()},
                    "fullDescription": {"text": r.doc or r.id}} for r in rules]
    index = {r.id: i for i, r in enumerate(rules)}
    results = []
    for m in matches:
        results.append({
            "ruleId": m.rule, "ruleIndex": index[m.rule], "level": "note",
            "message": {"text": f"{m.rule} applies in {m.class_}.{m.function}"},
            "locations": [{"physicalLocation": {
                "artifactLocation": {"uri": m.file},
                "region": {"startLine": m.line, "startColumn": m.col + 1, "endLine": m.end_line}}}],
            "properties": {"class": m.class_, "function": m.function, "init_lines": m.init_lines,
                           "bindings": m.bindings, "path": m.path},
        })
    return {"$schema": SARIF_SCHEMA, "version": "2.1.0",
            "runs": [{"tool": {"driver": {"name": "adopter", "informationUri": "https://pypi.org/project/adopter/",
                                          "rules": descriptors}},
                      "results": results}]}
