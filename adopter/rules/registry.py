"""Find rules: the bundled packs under `adopter/rules/<pack>/`, or files and folders the user names."""

from __future__ import annotations

from pathlib import Path

from adopter.support.cache import DEFAULT_DIR, ResultCache, entry_key
from adopter.records import AdopterError, Diagnostic
from adopter.support.plain import from_plain, to_plain
from adopter.rules.model import Rule

RULES_DIR = Path(__file__).resolve().parent


def bundled_rule_files() -> list[Path]:
    return sorted(RULES_DIR.glob("*/*.adopt"))


def bundled_rules() -> dict[str, list[Path]]:
    """Each bundled rule's id and its files: `<id>.adopt` first, then its other code shapes
    `<id>.<shape>.adopt` (one transformation, written another way in the code it finds)."""
    by_id: dict[str, list[Path]] = {}
    for f in sorted(bundled_rule_files(), key=lambda f: (f.stem.partition(".")[0], "." in f.stem, f.stem)):
        by_id.setdefault(f.stem.partition(".")[0], []).append(f)
    return by_id


def load_rule_cached(path: Path, cache: ResultCache) -> Rule:
    """`rules.dsl.load_rule`, remembered by the file's bytes (and the DSL's code, through the
    cache's fingerprint): an unchanged rule is a JSON read, and lark is never imported.
    (A cache that cannot be written is reported by the run that follows.)"""
    try:
        key = entry_key(path.read_bytes(), "rule", str(path))
    except OSError:
        key = None  # load_rule says why it cannot be read
    rule = cache.get(key, "rule", lambda value, _texts: from_plain(Rule, value)) if key else None
    if rule is not None:
        return rule
    from adopter.rules.dsl import load_rule  # the parser, only for a rule not seen before

    rule = load_rule(path)
    if key:
        cache.put(key, "rule", to_plain(rule))
    return rule


def load_rules(selectors: list[str] | None = None, cache_dir: Path | None = DEFAULT_DIR) -> list[Rule]:
    """Rules chosen by id (`softmax`: all its shapes), by one shape's key (`swiglu.silu_fn`), by pack
    (`paper`), or by path; all bundled by default.

    A malformed rule or an unknown id raises `AdopterError` before any analysis runs.
    Parsed rules are cached under `cache_dir` (None: parse every time).
    """
    by_id = bundled_rules()  # a rule's id selects all its files
    chosen: list[Path] = []
    for selector in selectors or [str(f) for files in by_id.values() for f in files]:
        path = Path(selector)
        if path.is_dir():
            chosen += sorted(path.glob("*.adopt"))
        elif path.is_file():
            chosen.append(path)
        elif (RULES_DIR / selector).is_dir():
            chosen += sorted((RULES_DIR / selector).glob("*.adopt"))
        elif selector in by_id:
            chosen += by_id[selector]
        elif (shape := next((f for files in by_id.values() for f in files if f.stem == selector), None)) is not None:
            chosen.append(shape)  # one shape of a rule, by the key `rules list` prints (`swiglu.silu_fn`)
        else:
            known = ", ".join(sorted(by_id))
            raise AdopterError(Diagnostic(selector, None, None, f"unknown rule id or path (bundled rules: {known})"))
    rules, seen = [], set()
    cache = ResultCache(cache_dir)
    for path in chosen:
        rule = load_rule_cached(path, cache)
        if rule.key not in seen:
            seen.add(rule.key)
            rules.append(rule)
    if not rules:
        raise AdopterError(Diagnostic(" ".join(selectors or []), None, None, "no rules selected"))
    return rules
