"""`adopter scan --format html`: one self-contained page a person reads in a browser.

At the top, the opportunities: per rule, its matches and, for each kernel set, how many of them
the set has a kernel for (a bar chart, inline SVG). Below, per file: each match with whether
the chosen kernel set rewrites it (or why not), the file's diff as `apply --diff` shows it, and
its near misses. No script, no external resource: the page is the same wherever it is opened.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from html import escape

from adopter.api.apply import ApplyReport, unified_diff
from adopter.records import Match, NearMiss, display_path
from adopter.rewrite.kernel_sets import KERNEL_SETS, rule_kernels
from adopter.rewrite.unsafe import Unsafe
from adopter.rules.model import Rule

_STYLE = """
body { font: 14px/1.4 system-ui, sans-serif; margin: 2em; color: #222; }
h1 { font-size: 1.5em; } h2 { font-size: 1.1em; margin-top: 2em; font-family: monospace; }
table { border-collapse: collapse; } td, th { border: 1px solid #ccc; padding: 2px 8px; text-align: left; }
tr.rewritten td.status { color: #116611; } tr.refused td.status { color: #885500; }
pre.diff { background: #f6f6f6; padding: 8px; overflow-x: auto; }
pre.diff .add { background: #e6ffe6; } pre.diff .del { background: #ffe6e6; } pre.diff .hunk { color: #555; }
li.near-miss { color: #555; } .diagnostic { color: #aa0000; }
"""
_COLORS = {"matches": "#888888", "paper": "#4c72b0", "torch": "#55a868", "default": "#c44e52"}
_ROW, _LABEL, _UNIT_MAX = 16, 220, 420


def rewritable(rule: Rule, kernels: str) -> bool:
    """Whether the kernel set has a kernel for every target the rule's rewrite names (a
    detect-only rule, whose target is `_`, has none)."""
    try:
        return bool(rule_kernels(rule, kernels))
    except Unsafe:
        return False


def render_html(report: ApplyReport, rules: list[Rule], kernels: str, near_misses: list[NearMiss] = (),
                title: str = "Adopter report", version: str = "") -> str:
    """The page for `report` (the scan's matches patched with the kernel set `kernels`), with
    the near misses of the same scan."""
    by_key = {rule.key: rule for rule in rules}
    matches = [m for patch in report.patches for m in patch.applied] + \
              [m for patch in report.patches for m, _ in patch.refused]
    parts = [f"<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>{escape(title)}</title>",
             f"<style>{_STYLE}</style></head><body>",
             f"<h1>{escape(title)}</h1>",
             _summary(report, matches, near_misses, kernels, version),
             _chart(matches, by_key)]
    misses_by_file: dict[str, list[NearMiss]] = defaultdict(list)
    for miss in near_misses:
        misses_by_file[miss.file].append(miss)
    patches = {patch.path: patch for patch in report.patches}
    for index, path in enumerate(sorted(set(patches) | set(misses_by_file))):
        parts.append(_file_section(index, path, patches.get(path), misses_by_file.get(path, []), kernels))
    if report.diagnostics:
        parts.append("<h2>Diagnostics</h2><ul id=\"diagnostics\">"
                     + "".join(f"<li class=\"diagnostic\">{escape(str(d))}</li>" for d in report.diagnostics) + "</ul>")
    parts.append("</body></html>\n")
    return "\n".join(parts)


def _summary(report: ApplyReport, matches: list[Match], near_misses, kernels: str, version: str) -> str:
    rewritten = sum(len(patch.applied) for patch in report.patches)
    files = len({m.file for m in matches})
    return (f"<p id=\"summary\">{len(matches)} matches in {files} files; the <code>{escape(kernels)}</code> kernel "
            f"set rewrites {rewritten} of them; {len(near_misses)} near misses; "
            f"{sum(1 for d in report.diagnostics if d.severity == 'error')} files failed."
            + (f" Adopter {escape(version)}." if version else "") + "</p>")


def _chart(matches: list[Match], by_key: dict[str, Rule]) -> str:
    """Per rule: its matches, and the matches each kernel set has a kernel for."""
    counts = Counter(m.rule_key for m in matches)
    per_rule: dict[str, Counter] = defaultdict(Counter)
    for key, count in counts.items():
        rule = by_key.get(key)
        per_rule[key.split(".")[0]]["matches"] += count
        for kernels in KERNEL_SETS:
            if rule is not None and rewritable(rule, kernels):
                per_rule[key.split(".")[0]][kernels] += count
    if not per_rule:
        return "<div id=\"chart\"><p>No matches.</p></div>"
    series = ["matches", *KERNEL_SETS]
    top = max(c["matches"] for c in per_rule.values())
    rows = sorted(per_rule.items(), key=lambda item: (-item[1]["matches"], item[0]))
    height = len(rows) * (len(series) * _ROW + 10) + 30
    svg = [f"<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{_LABEL + _UNIT_MAX + 60}\" height=\"{height}\" "
           "role=\"img\" aria-label=\"matches per rule, and those each kernel set rewrites\">"]
    y = 0
    for rule, count in rows:
        svg.append(f"<text x=\"0\" y=\"{y + _ROW}\" font-size=\"13\">{escape(rule)}</text>")
        for i, name in enumerate(series):
            width = round(_UNIT_MAX * count[name] / top) if top else 0
            top_y = y + i * _ROW
            svg.append(f"<rect class=\"bar\" data-rule=\"{escape(rule)}\" data-series=\"{name}\" data-count=\"{count[name]}\" "
                       f"x=\"{_LABEL}\" y=\"{top_y + 2}\" width=\"{width}\" height=\"{_ROW - 4}\" fill=\"{_COLORS[name]}\">"
                       f"<title>{escape(rule)}: {count[name]} ({name})</title></rect>")
            svg.append(f"<text x=\"{_LABEL + width + 4}\" y=\"{top_y + _ROW - 3}\" font-size=\"11\">{count[name]}</text>")
        y += len(series) * _ROW + 10
    legend = " ".join(f"<span style=\"color:{_COLORS[name]}\">&#9632;</span> {escape(name if name == 'matches' else f'{name} set')}"
                      for name in series)
    return f"<div id=\"chart\"><h2>Opportunities per rule: its matches, and those each kernel set has a kernel for</h2><p>{legend}</p>{''.join(svg)}</svg></div>"


def _file_section(index: int, path: str, patch, near_misses: list[NearMiss], kernels: str) -> str:
    rows = []
    if patch is not None:
        found = [(m, "") for m in patch.applied] + list(patch.refused)
        for match, reason in sorted(found, key=lambda item: (item[0].line, item[0].col, item[0].rule)):
            status = "rewritten" if not reason else f"not rewritten: {reason}"
            where = f"{match.class_}.{match.function}" if match.class_ and match.class_ != "-" else match.function
            rows.append(f"<tr class=\"match {'refused' if reason else 'rewritten'}\" data-rule=\"{escape(match.rule)}\" "
                        f"data-line=\"{match.line}\"><td>{match.line}</td><td>{escape(match.rule)}</td>"
                        f"<td>{escape(where)}</td><td class=\"status\">{escape(status)}</td></tr>")
    parts = [f"<section class=\"file\" id=\"file-{index}\"><h2>{escape(display_path(path))}</h2>"]
    if rows:
        parts.append("<table class=\"matches\"><tr><th>line</th><th>rule</th><th>where</th>"
                     f"<th>with <code>{escape(kernels)}</code></th></tr>" + "".join(rows) + "</table>")
    if patch is not None and patch.changed:
        parts.append(_diff(patch))
    if near_misses:
        parts.append("<h3>Near misses</h3><ul class=\"near-misses\">" + "".join(
            f"<li class=\"near-miss\" data-rule=\"{escape(m.rule)}\" data-line=\"{m.line}\">line {m.line}: "
            f"{escape(m.rule)}: {escape(m.check)}{': ' + escape(m.detail) if m.detail else ''}</li>"
            for m in sorted(near_misses, key=lambda m: (m.line, m.rule))) + "</ul>")
    parts.append("</section>")
    return "".join(parts)


def _diff(patch) -> str:
    """`apply --diff`'s text of the patch, each line marked for its colour."""
    out = []
    for line in unified_diff(patch).splitlines(keepends=True):
        kind = ("hunk" if line.startswith("@@") else "add" if line.startswith("+") and not line.startswith("+++")
                else "del" if line.startswith("-") and not line.startswith("---") else "")
        text = escape(line.rstrip("\n"))
        out.append(f"<span class=\"{kind}\">{text}</span>" if kind else text)
    return "<pre class=\"diff\">" + "\n".join(out) + "</pre>"

