"""The syntactic next-mention index (`quiet_run/3`), from a file's fact rows.

Reaching definitions in `adopter/datalog/flow/reaching.lp` hold a row per statement and
live variable; in one long method every statement between a variable's mentions carries
it. Control passes through a run of sibling statements that never name a variable without
assigning or reading it, so the flow of that variable may jump from the run's first
statement straight to the next sibling that names it. Which siblings name which variables is
syntax, read off the rows already emitted (every name expression, and the names bound by
imports, nested definitions, `except ... as` and `case` captures): naming a variable where it
is not read is an over-approximation, which only keeps a run from being jumped.
"""

from __future__ import annotations

from collections import defaultdict
from operator import itemgetter

# Blocks whose statements run one after the other: a handler or a `case` is entered from
# elsewhere, not from the sibling before it.
SEQUENTIAL_BRANCHES = frozenset({"body", "orelse", "finalbody"})


def _mentions(rows: dict[str, list[tuple]], function_of: dict[int, int]) -> tuple[dict[int, set[str]], set[tuple[int, str]]]:
    """Statement -> the names written anywhere inside it (nested statements included); and
    the (function, name) pairs some statement of the function stores or binds."""
    # (each name expression's statement, from a dict built in C: walking every expression row
    # in Python was most of this index's cost)
    stmt_of = dict(map(itemgetter(0, 1), rows["expr"]))
    mentions: dict[int, set[str]] = defaultdict(set)
    stored: set[tuple[int, str]] = set()
    for expr, name, ctx in rows["name"]:
        stmt = stmt_of[expr]
        if stmt not in function_of:  # held by a function id (a default, a decorator): in no block
            continue
        mentions[stmt].add(name)
        if ctx == "store":
            stored.add((function_of[stmt], name))
    for stmt, name, *_ in rows["stmt_binding"] + rows["import_binding"]:
        mentions[stmt].add(name)
        stored.add((function_of[stmt], name))
    parent = {stmt: parent for stmt, parent, _branch, _index in rows["stmt_block"]}
    # ids grow from a statement to the statements inside it: the deepest are folded up first
    for stmt in sorted(parent, reverse=True):
        if stmt in mentions and parent[stmt] in parent:
            mentions[parent[stmt]] |= mentions[stmt]
    return mentions, stored


def quiet_runs(rows: dict[str, list[tuple]]) -> list[tuple[int, str, int]]:
    """(First, Name, Next): in a block of statements run in order, the siblings from First up to
    Next (exclusive) do not name Name, Next does, and First is the block's first statement or
    follows one that names Name. Only runs of at least one statement, only in functions, and
    only for a name some statement of the function stores or binds: the analysis walks no
    other (a global, a parameter never reassigned)."""
    function_of = {row[0]: row[1] for row in rows["stmt"]}
    blocks: dict[tuple[int, str], list[tuple[int, int]]] = defaultdict(list)
    for stmt, parent, branch, index in rows["stmt_block"]:
        if branch in SEQUENTIAL_BRANCHES and function_of[stmt] != 0:
            blocks[parent, branch].append((index, stmt))
    mentions, stored = _mentions(rows, function_of)
    out: list[tuple[int, str, int]] = []
    for siblings in blocks.values():
        siblings.sort()
        order = [stmt for _index, stmt in siblings]
        function = function_of[order[0]]
        last: dict[str, int] = {}  # name -> position of the sibling that last named it
        for position, stmt in enumerate(order):
            for name in mentions.get(stmt, ()):
                first = last.get(name, -1) + 1
                if first < position and (function, name) in stored:
                    out.append((order[first], name, stmt))
                last[name] = position
    out.sort()
    return out
