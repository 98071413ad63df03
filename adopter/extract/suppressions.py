"""In-source suppressions: `# adopter: ignore` (every rule) or `# adopter: ignore[rule-id, ...]`
on a match's first line keeps that match out of the report and out of `apply`, as `# noqa` does
for ruff. Comments are not facts (the ast has none): they are read here, from the tokens."""

from __future__ import annotations

import io
import re
import tokenize

_IGNORE = re.compile(r"#\s*adopter:\s*ignore(?:\[([^\]]*)\])?", re.IGNORECASE)
EVERY_RULE = None  # an ignore without a list


def suppressions(text: str) -> dict[int, frozenset[str] | None]:
    """Line -> the rule ids ignored there (EVERY_RULE for a bare `# adopter: ignore`). A file that
    does not tokenize (it would not have been analysed) has none."""
    if "adopter:" not in text.lower():
        return {}
    found: dict[int, frozenset[str] | None] = {}
    try:
        for token in tokenize.generate_tokens(io.StringIO(text).readline):
            if token.type != tokenize.COMMENT:
                continue
            m = _IGNORE.search(token.string)
            if m is None:
                continue
            line = token.start[0]
            if m.group(1) is None or found.get(line, frozenset()) is EVERY_RULE:
                found[line] = EVERY_RULE
            else:
                ids = frozenset(part.strip() for part in m.group(1).split(",") if part.strip())
                found[line] = found.get(line, frozenset()) | ids
    except (tokenize.TokenError, SyntaxError):
        return {}
    return found


def ignores(suppressed: dict[int, frozenset[str] | None], line: int, rule: str) -> bool:
    """Whether the suppressions keep rule `rule`'s record at `line` out."""
    if line not in suppressed:
        return False
    ids = suppressed[line]
    return ids is EVERY_RULE or rule in ids
