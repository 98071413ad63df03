"""The join plan of a compiled rule: in which order its pattern's nodes are bound, at which
step each body literal can be evaluated, and the chain of rules that carries the partial
candidates from one step to the next.

A rule body written as one clingo rule would be ordered by clingo's guesses of literal
sizes, which costs time quadratic in its length on every file and may start anywhere in the
pattern; a chain follows the pattern's order, with at most one node's literals per rule. The
bundled rules have at most nine nodes, so the plan is written for clarity, not for size.
"""

from __future__ import annotations

import re

_STRING = re.compile(r'"(?:[^"\\]|\\.)*"')
_VARIABLE = re.compile(r"\b[A-Z][A-Za-z0-9_]*")


def literal_variables(literal: str) -> list[str]:
    """The variables of a body literal, in order (not those inside string terms)."""
    return _VARIABLE.findall(_STRING.sub("", literal))


def is_positive(literal: str) -> bool:
    """A literal that binds its variables: not negated, not a comparison."""
    return not literal.startswith("not ") and not re.search(r"[<>=]", _STRING.sub("", literal))


def binding_order(producers: list[set[int]]) -> list[int]:
    """The order in which the chain binds the pattern's nodes (`producers[i]`: the nodes
    whose outputs node i reads): as written, except that a node whose producers are all bound
    comes right after them, before any node no one reads from.

    Bound as written, `$q($x); $k($x); $v($x) & view($qo) & ...` would pair every two
    projections of one input before asking which of them a head split reads; bound right after
    its producer, a consumer keeps only the nodes it reads. (The candidate's nodes keep the
    pattern's positions: only the join changes.)"""
    n = len(producers)
    placed: list[int] = []
    ready_consumers: set[int] = set()  # nodes whose producers (one at least) are all placed
    while len(placed) < n:
        left = set(range(n)) - set(placed)
        free = {i for i in left if not producers[i]}
        chosen = min(ready_consumers & left or free or left)
        placed.append(chosen)
        ready_consumers |= {i for i in left - {chosen} if producers[i] and producers[i] <= set(placed)}
    return placed


def wait_for_bindings(steps: list[int], free: list[list[str]], positive: list[bool], last: int) -> list[int]:
    """The step of each literal once its variables are bound: a variable that is no node or
    constructor is bound at the earliest step of a positive literal holding it (at most the
    last step), and a literal holding it waits for that step. `steps` are where each literal
    would go by its nodes; the result is the least fixpoint above them."""
    steps = list(steps)
    while True:
        bound = {}
        for i, variables in enumerate(free):
            for v in variables:
                if positive[i]:
                    bound[v] = min(bound.get(v, last), steps[i], last)
        moved = [max([steps[i]] + [bound.get(v, 0) for v in variables]) for i, variables in enumerate(free)]
        if moved == steps:
            return steps
        steps = moved


def _root_first(variable: str) -> tuple[bool, str]:
    return variable != "R", variable


def chain(name_term: str, body: list[str], nodes: list[str], ctors: list[str], head: str,
          kept: list[str] = ()) -> list[str]:
    """The candidate rule as a chain of rules, one per pattern node: step k joins the partial
    candidates of step k-1 (`cand_part(Name, k-1, ...)`) with node k's literals and those that
    wait for it; the last step derives `head`. `nodes` are the node variables in the order they
    are bound; `ctors` the constructor variables; `kept`, variables the head needs besides them.

    A step carries a variable while a later step's literal, or the head, holds it (R, the
    root, first, then the others in name order)."""
    body = list(dict.fromkeys(body))  # pairwise literals (keys, equal values) name a middle node twice
    names = [literal_variables(literal) for literal in body]
    last = len(nodes)
    step = {x: k + 1 for k, x in enumerate(nodes)}
    # a constructor is bound with the node whose `ctor` literal names it first, else at the last step
    for c in ctors:
        anchors = [max(step[v] for v in variables if v in step)
                   for literal, variables in zip(body, names) if literal.startswith("ctor(") and c in variables]
        step[c] = min(anchors, default=last)
    at = [max([step.get(v, 0) for v in variables] + [1]) for variables in names]
    at = wait_for_bindings(at, [[v for v in variables if v not in step] for variables in names],
                           [is_positive(literal) for literal in body], last)
    last_use = dict.fromkeys([*nodes, *ctors, *kept], last + 1) | {"R": 1}
    for k, variables in zip(at, names):
        for v in variables:
            last_use[v] = max(last_use.get(v, k), k)
    rules, holding = [], {"R"}
    for k in range(1, last + 1):
        previous = [f"cand_part({name_term}, {k - 1}, {', '.join(sorted(holding, key=_root_first))})"] if k > 1 else []
        holding -= {v for v, until in last_use.items() if until == k}
        own = [i for i in range(len(body)) if at[i] == k]
        holding |= {v for i in own for v in names[i] if last_use[v] > k}
        target = head if k == last else f"cand_part({name_term}, {k}, {', '.join(sorted(holding, key=_root_first))})"
        rules.append(f"{target} :- {', '.join(previous + [body[i] for i in own])}.")
    return rules
