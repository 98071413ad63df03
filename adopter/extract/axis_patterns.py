"""A string literal in einops' axis notation (`'... (d r) -> ... d r'`) -> its dimensions.

The notation is plain text to Python; lowering it to rows lets the analysis ask what a
rearrangement does to a tensor's dimensions (datalog/models/einops.lp) without reading
strings. Which calls take such a pattern is the analysis's business, not this module's:
every literal of the notation's shape gets its rows.
"""

from __future__ import annotations

import re

_TOKEN = re.compile(r"\s*(\.\.\.|\(|\)|[A-Za-z_][A-Za-z0-9_]*|\d+)")
ALONE = -1  # the member number of an axis that is not in a parenthesised group


def _side(text: str) -> list[str | list[str]] | None:
    """The dimensions of one side, left to right: an axis alone as its name, a
    parenthesised group as the list of its axes; None when the text is not the notation."""
    dims: list[str | list[str]] = []
    group: list[str] | None = None
    pos = 0
    text = text.strip()
    while pos < len(text):
        m = _TOKEN.match(text, pos)
        if m is None:
            return None
        token, pos = m.group(1), m.end()
        if token == "(":
            if group is not None:
                return None
            group = []
        elif token == ")":
            if group is None:
                return None
            dims.append(group)
            group = None
        elif group is not None:
            group.append(token)
        else:
            dims.append(token)
    return None if group is not None else dims


def axis_rows(text: str) -> list[tuple[str, int, int, str]]:
    """`(side, dim, member, axis)` for each axis of a one-operand pattern `lhs -> rhs`:
    side `in`/`out`, dim counted from the last (-1), member its place in a parenthesised
    group (ALONE when not in one). Empty for any other text."""
    sides = text.split("->")
    if len(sides) != 2:
        return []
    parsed = [_side(s) for s in sides]
    if any(p is None or not p for p in parsed):
        return []
    rows = []
    for side, dims in zip(("in", "out"), parsed):
        for i, dim in enumerate(dims):
            index = i - len(dims)
            if isinstance(dim, str):
                rows.append((side, index, ALONE, dim))
            else:
                rows.extend((side, index, member, axis) for member, axis in enumerate(dim))
    return rows
