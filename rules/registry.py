"""Find rules: the bundled packs under `rules/<pack>/`, or files and folders the user names."""

from __future__ import annotations

from pathlib import Path

from adopter.diagnostics import AdopterError, Diagnostic
from rules.dsl import Rule, load_rule

RULES_DIR = Path(__file__).resolve().parent


def bundled_rule_files() -> list[Path]:
    return sorted(RULES_DIR.glob("*/*.adopt"))


def load_rules(selectors: list[str] | None = None) -> list[Rule]:
    """Rules chosen by id (`softmax`), by pack (`paper`), or by path; all bundled by default.

    A malformed rule or an unknown id raises `AdopterError` before any analysis runs.
    """
    files = bundled_rule_files()
    by_id = {f.stem: f for f in files}
    chosen: list[Path] = []
    for selector in selectors or [str(f) for f in files]:
        path = Path(selector)
        if path.is_dir():
            chosen += sorted(path.glob("*.adopt"))
        elif path.is_file():
            chosen.append(path)
        elif (RULES_DIR / selector).is_dir():
            chosen += sorted((RULES_DIR / selector).glob("*.adopt"))
        elif selector in by_id:
            chosen.append(by_id[selector])
        else:
            known = ", ".join(sorted(by_id))
            raise AdopterError(Diagnostic(selector, None, None, f"unknown rule id or path (bundled rules: {known})"))
    rules, seen = [], set()
    for path in chosen:
        rule = load_rule(path)
        if rule.id not in seen:
            seen.add(rule.id)
            rules.append(rule)
    if not rules:
        raise AdopterError(Diagnostic(" ".join(selectors or []), None, None, "no rules selected"))
    return rules
