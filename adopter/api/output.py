"""Render scan matches: JSON lines (README.md, "Outputs"), SARIF 2.1.0, or a table for people."""

from __future__ import annotations

import json
from pathlib import Path, PurePath
from urllib.parse import quote

from adopter.records import Diagnostic, display_path
from adopter.records import Match, NearMiss
from adopter.rules.model import Rule, what_it_does
from adopter.support.atomic import atomic_write_text

SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"


def render_matches(matches: list[Match], fmt: str, rules: list[Rule], diagnostics: list[Diagnostic] = (),
                   near_misses: list[NearMiss] = ()) -> str:
    """The report; SARIF also records the run's diagnostics (JSONL and the table leave them
    to stderr). Near misses (`scan --explain`) follow the matches: JSONL lines with a
    `near_miss` object, table rows with the reason, SARIF results of level `none`."""
    if fmt == "jsonl":
        return "".join(json.dumps(m.to_json(), sort_keys=False) + "\n" for m in [*matches, *near_misses])
    if fmt == "sarif":
        return json.dumps(sarif(matches, rules, diagnostics, near_misses), indent=2) + "\n"
    return table(matches) + (near_miss_table(near_misses) if near_misses else "")


def write_report(path: Path, text: str) -> None:
    """Write a report atomically (a reader sees the old file or the new one); OSError if it cannot."""
    atomic_write_text(path, text)


def file_uri(path: str) -> str:
    """A SARIF `uri`: a percent-encoded relative reference, or a file URI for an absolute path."""
    pure = PurePath(path)
    return pure.as_uri() if pure.is_absolute() else quote(pure.as_posix(), safe="/")


def table(matches: list[Match]) -> str:
    if not matches:
        return "no matches\n"
    rows = [("LOCATION", "RULE", "CLASS.FUNCTION", "PATH")]
    for m in matches:
        path = ", ".join([*map(str, m.path), *(["..."] if m.path_truncated else [])])
        rows.append((f"{display_path(m.file)}:{m.line}", m.rule, m.where, path or "-"))
    widths = [max(len(r[i]) for r in rows) for i in range(3)]
    return "".join("  ".join(c.ljust(w) for c, w in zip(r[:3], widths)) + "  " + r[3] + "\n" for r in rows)


def near_miss_table(near_misses: list[NearMiss]) -> str:
    rows = [("NEAR MISS", "RULE", "CLASS.FUNCTION", "WHY NOT")]
    rows += [(f"{display_path(m.file)}:{m.line}", m.rule, m.where, m.reason()) for m in near_misses]
    widths = [max(len(r[i]) for r in rows) for i in range(3)]
    return "\n" + "".join("  ".join(c.ljust(w) for c, w in zip(r[:3], widths)) + "  " + r[3] + "\n" for r in rows)


def sarif(matches: list[Match], rules: list[Rule], diagnostics: list[Diagnostic] = (),
          near_misses: list[NearMiss] = ()) -> dict:
    """A SARIF 2.1.0 log: one run, one reporting descriptor per rule, one result per match,
    and one invocation whose notifications are the diagnostics (a failed file makes the
    execution unsuccessful)."""
    main: dict[str, Rule] = {}  # one descriptor per rule id: its `<id>.adopt`, which documents it, not a further shape's
    for r in rules:
        if r.id not in main or (main[r.id].shape and not r.shape):
            main[r.id] = r
    descriptors = [{"id": r.id, "name": r.id,
                    "shortDescription": {"text": what_it_does(r.doc) or r.id},
                    "fullDescription": {"text": r.doc or r.id}} for r in main.values()]
    index = {rule_id: i for i, rule_id in enumerate(main)}
    results = []
    for m in matches:
        results.append({
            "ruleId": m.rule, "ruleIndex": index[m.rule], "level": "note",
            "message": {"text": f"{m.rule} applies in {m.where}"},
            "locations": [{"physicalLocation": {
                "artifactLocation": {"uri": file_uri(m.file)},
                "region": {"startLine": m.line, "startColumn": m.col + 1, "endLine": m.end_line}}}],
            "properties": {"class": m.class_, "function": m.function, "init_lines": m.init_lines,
                           "bindings": m.bindings, "path": [literal.to_json() for literal in m.path],
                           **({"path_truncated": True} if m.path_truncated else {})},
        })
    for m in near_misses:
        results.append({
            "ruleId": m.rule, "ruleIndex": index[m.rule], "level": "none", "kind": "informational",
            "message": {"text": f"{m.rule} does not apply in {m.where}: {m.reason()}"},
            "locations": [{"physicalLocation": {
                "artifactLocation": {"uri": file_uri(m.file)}, "region": {"startLine": m.line, "startColumn": m.col + 1}}}],
            "properties": {"near_miss": {"check": m.check, "detail": m.detail, "detail_line": m.detail_line}},
        })
    invocation = {"executionSuccessful": not any(d.severity == "error" for d in diagnostics),
                  "toolExecutionNotifications": [_notification(d) for d in diagnostics]}
    return {"$schema": SARIF_SCHEMA, "version": "2.1.0",
            # (no informationUri: Adopter has no public page; the package page it named does not exist)
            "runs": [{"tool": {"driver": {"name": "adopter", "version": installed_version() or "0+source",
                                          "rules": descriptors}},
                      "invocations": [invocation],
                      "results": results}]}


def installed_version() -> str | None:
    """The installed distribution's version (None: run from a checkout that is not installed)."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("adopter")
    except PackageNotFoundError:
        return None


def _notification(diagnostic: Diagnostic) -> dict:
    location: dict = {"artifactLocation": {"uri": file_uri(diagnostic.file)}}
    if diagnostic.line is not None and diagnostic.line > 0:
        location["region"] = {"startLine": diagnostic.line}
        if diagnostic.col is not None and diagnostic.col > 0:
            location["region"]["startColumn"] = diagnostic.col
    return {"level": "error" if diagnostic.severity == "error" else "warning",
            "message": {"text": diagnostic.message}, "locations": [{"physicalLocation": location}]}
