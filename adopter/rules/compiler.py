"""Compile a parsed rule into Datalog: the rule's candidates (checked by one program for all rules).

For a forward pattern of k nodes the generated program has
  `cand(m("<id>", Root, (X1..Xk,), (C1..Cm,)))`  nodes of the right types, connected by
                        data flow as the pattern's variables say, with constructors C1..Cm
                        matching the init pattern; found node by node through
                        `cand_part("<id>", I, Root, ...)`, the partial candidates of nodes 1..I;
  `pattern_edge("<id>", I, J)`, `guards_equal`, `fallback_eager`  facts about the pattern;
  `pattern_type(Type)` (or `pattern_any`)  the node types it names, for adopter/datalog/match/support.lp.
One program for all rules (`adopter/datalog/match/checks.lp`) keeps the candidates whose nodes
can share one path and whose intermediate values nothing else reads, as `match_node` etc.
Every question is answered by the analyses' relations (`adopter/datalog/`); this module only
writes the rule body. (A candidate check written out per rule would cost grounding time
per rule and file before any fact is read.)
"""

from __future__ import annotations

import bisect
import heapq
import re
from dataclasses import dataclass

from adopter.rules.model import Input, Rule


def q(text: str) -> str:
    """`text` as a clingo string term: the only way rule text reaches a program."""
    if "\0" in text:
        raise ValueError("clingo strings cannot hold a NUL character")
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


@dataclass
class _Var:
    """Where a `$variable` is bound: a node's output, a constructor, or an input."""

    producer: int | None = None        # index of the forward node whose output it is
    ctor: int | None = None            # index of the init node it names
    uses: list = None                  # (node index, Input) of forward inputs
    init_uses: list = None             # (init index, Input) of init inputs


def compile_rule(rule: Rule) -> str:
    """The Datalog program (text) finding one rule's candidates (`cand`) and its pattern facts."""
    name = rule.key
    fwd, init = rule.forward_source, rule.init_source
    xs = [f"X{i + 1}" for i in range(len(fwd))]
    cs = [f"C{j + 1}" for j in range(len(init))]
    ctor_index = {node.output: j for j, node in enumerate(init)}
    variables: dict[str, _Var] = {}

    def var(v: str) -> _Var:
        return variables.setdefault(v, _Var(uses=[], init_uses=[]))

    for i, node in enumerate(fwd):
        if node.output:
            var(node.output).producer = i
        for item in node.inputs:
            if item.arg.var:
                var(item.arg.var).uses.append((i, item))
    for j, node in enumerate(init):
        var(node.output).ctor = j
        for item in node.inputs:
            if item.arg.var:
                var(item.arg.var).init_uses.append((j, item))

    body = []
    types = []  # the node types the pattern names (adopter/datalog/match/support.lp computes inputs, keys... for those)
    # a binary node's operands are at positions Left/Right (support.lp's operand_order: as
    # written, or swapped for a commutative operator); the candidate carries each Left
    binary = [i for i, node in enumerate(fwd) if node.kind == "binary"]

    def pos(i: int, item: Input) -> str:
        return (f"Left{i + 1}", f"Right{i + 1}")[item.position] if i in binary else _pos(item)

    # A node that reads a node bound before it in the chain is reached along that edge, its
    # first such input: `rule_edge(Xj, P, Xk, R, Kk)` (support.lp) is `input_from(Xk, P, Xj)`
    # joined with `rule_node_at(Xk, R, Kk)`, as one literal. clingo orders a body by guessing each
    # literal's size from its relation's size and arity, and for an operand edge (two unbound
    # arguments) it guessed the root's rule nodes smaller: every partial candidate was paired
    # with every rule node of its root and the pairs tested one by one, which grows with the
    # square of a method's length. One literal leaves it nothing else to start from.
    order = _binding_order(fwd, variables)
    rank = {i: k for k, i in enumerate(order)}

    for i, node in enumerate(fwd):
        x = xs[i]
        edge, source = next(((item, p) for item in node.inputs
                             if (p := _edge_source(item, variables)) is not None and rank[p] < rank[i]), (None, None))
        if edge is None:
            body.append(f"rule_node_at({x}, R, K{i + 1})")  # a node of a rule root, and its key (support.lp)
        else:
            body.append(f"rule_edge({xs[source]}, {pos(i, edge)}, {x}, R, K{i + 1})")
        if node.kind == "layer" and node.callee.startswith("$"):
            j = ctor_index[node.callee]
            body.append(f"ctor({x}, O{j + 1}, {cs[j]})")
            types += init[j].callees  # the layer's type is its constructor's (one of them, for `a|b`)
        elif node.kind == "layer":  # (alternatives `a|b` as a pool: one rule per type)
            body += [f"node_type({x}, ({';'.join(map(q, node.callees))}))", f"not node_kind({x}, op)"]
            types += node.callees
        elif node.kind in ("binary", "unary"):
            body += [f"node_kind({x}, op)", f"node_type({x}, {q(node.op)})"]
            if node.kind == "binary":
                body.append(f"operand_order({x}, Left{i + 1}, Right{i + 1})")
            types.append(node.op)
            if node.kind == "unary":
                body.append(f"not node_input({x}, 1, _, _)")
        else:  # a wildcard: any node
            types.append(None)
        for item in node.inputs:
            if item is not edge:
                body += _input_literals(x, pos(i, item), item, variables, xs)
    for j, node in enumerate(init):
        c = cs[j]
        body.append(f"value_type({c}, ({';'.join(map(q, node.callees))}))")  # (`a|b`: a pool, as above)
        for k, item in enumerate(node.inputs):
            pos = _pos(item)
            if item.arg.const is not None or item.arg.code is not None:
                # `kw=value` holds where the argument may be value (a parameter's default too);
                # `kw!=value` where it is not written as value
                const = "ctor_const" if item.negated else "ctor_may_const"
                literal = (f"{const}({c}, {pos}, {q(item.arg.const)})" if item.arg.const is not None
                           else f"ctor_text({c}, {pos}, {q(item.arg.code)})")
                body.append(f"not {literal}" if item.negated else literal)
            else:
                body.append(f"ctor_arg({c}, {pos}, _Arg{j + 1}_{k + 1})")  # named, not `_` (adopter/datalog/main.lp says why)
    # one external variable used several times: all uses hold the same value (and, checked in
    # checks.lp by shared_input/5 below, the same set of values: on every path); a part of it,
    # `$x[:half]`, `$x[::2]` or `$x[..., 0]`, holds that part of the same value (support.lp's input_half/4,
    # input_parity/4, input_item/4)
    def value_literal(i: int, item: Input, v: str) -> str:
        if item.arg.part is not None:
            kind, which = item.arg.part
            return f"input_{kind}({xs[i]}, {pos(i, item)}, {which}, V_{v[1:]})"
        return f"input_value({xs[i]}, {pos(i, item)}, V_{v[1:]})"

    for v, info in variables.items():
        if info.producer is None and info.ctor is None:
            uses = info.uses
            for (i1, a), (i2, b) in zip(uses, uses[1:]):
                body.append(value_literal(i1, a, v))
                body.append(value_literal(i2, b, v))
            body += [value_literal(i, a, v) for i, a in uses if a.arg.part is not None]
            if info.init_uses and uses:
                (i1, a), (j1, b) = uses[0], info.init_uses[0]
                body += [f"input_text({xs[i1]}, {pos(i1, a)}, T_{v[1:]})", f"ctor_text({cs[j1]}, {_pos(b)}, T_{v[1:]})"]
            for (j1, a), (j2, b) in zip(info.init_uses, info.init_uses[1:]):
                body += [f"ctor_text({cs[j1]}, {_pos(a)}, T_{v[1:]})", f"ctor_text({cs[j2]}, {_pos(b)}, T_{v[1:]})"]
    # `;` is a sequence: the nodes run in the pattern's order. A node has one key (node_key
    # in adopter/datalog/match/support.lp is a function of the node's site), so K1 < K2 < ... also
    # makes the nodes distinct: no `Xi != Xj` literals, which would grow with the square of
    # the pattern's length. Constructors have no order: two `init:` nodes are two objects.
    # A node written after `&` has no order against the one before it; it is kept distinct
    # from the nodes before it by `!=` instead (a few such nodes, so few literals).
    for k, node in enumerate(fwd[1:], 1):
        if node.ordered:
            body.append(f"K{k} < K{k + 1}")
        else:
            body += [f"{xs[i]} != {xs[k]}" for i in range(k)]
    body += [f"{a} != {b}" for k, a in enumerate(cs) for b in cs[k + 1:]]

    # A candidate is one term, m(Rule, Root, Nodes, Ctors); the checks every candidate goes
    # through (feasibility, reads of intermediate values, guarded fallbacks) are the same for
    # all rules and live in adopter/datalog/match/checks.lp, fed by the facts below.
    nodes, ctors = f"({', '.join(xs)},)", f"({', '.join(cs)},)" if cs else "()"
    term = f"m({q(name)}, R, {nodes}, {ctors})"
    # (no path in this comment: a path is user text, and a newline in it would end the comment)
    lefts = [f"Left{i + 1}" for i in binary]
    head = f"cand_oriented({term}, ({', '.join(lefts)},))" if binary else f"cand({term})"
    lines = [f"% rule {q(name)}, generated by adopter/rules/compiler.py; checks: adopter/datalog/match/checks.lp",
             *_chained(name, body, [xs[i] for i in order], cs, head, lefts)]
    # pattern_edge(Rule, I, J): node J reads node I's output (the values the fusion hides); a
    # read of parts of it (`$p[:half]`, `$p[::2]`) is not one: the code takes them, and they stay
    for v, info in variables.items():
        if info.producer is not None:
            lines += [f"pattern_edge({q(name)}, {info.producer}, {i})."
                      for i in sorted({i for i, item in info.uses if item.arg.part is None})]
    lines += [f"pattern_kept({q(name)}, {i})." for i in rule.kept_nodes]
    lines += sorted({f"pattern_type({q(t)})." if t is not None else "pattern_any." for t in types})
    for v, info in variables.items():
        if info.producer is None and info.ctor is None:
            # (an operand's position depends on the match's orientation: binary nodes keep the
            # one-shared-value test above)
            for (i1, a), (i2, b) in zip(info.uses, info.uses[1:]):
                if i1 not in binary and i2 not in binary and a.arg.part is None and b.arg.part is None:
                    lines.append(f"shared_input({q(name)}, {i1}, {_pos(a)}, {i2}, {_pos(b)}).")
    # the parts of inputs the pattern names: tuple elements at a position of a type, halves, alternate items
    kinds = {item.arg.part[0] for node in fwd for item in node.inputs if item.arg.part is not None}
    lines += [f"{asked}." for kind, asked in (("half", "halves_asked"), ("parity", "parities_asked"), ("item", "items_asked"))
              if kind in kinds]
    for i, node in enumerate(fwd):
        at = sorted({_pos(item, whole=True) for item in node.inputs if item.element is not None})
        callees = init[ctor_index[node.callee]].callees if node.callee and node.callee.startswith("$") else node.callees
        lines += [f"elements_asked({q(t)}, {p})." for t in callees for p in at]
    if rule.guards == "equal":  # the layers the init part binds run exactly when each other do (else every node)
        lines.append(f"guards_equal({q(name)}).")
        bound = [i for i, node in enumerate(fwd) if node.kind == "layer" and node.callee.startswith("$")]
        lines += [f"guards_equal_node({q(name)}, {i})." for i in bound or range(len(fwd))]
    if rule.fallback == "eager":
        lines.append(f"fallback_eager({q(name)}).")
    if rule.metadata == "allowed":
        lines.append(f"metadata_allowed({q(name)}).")
    if rule.reads == "allowed":
        lines.append(f"reads_allowed({q(name)}).")
    return "\n".join(lines) + "\n"


def _pos(item: Input, whole: bool = False) -> str:
    """The input's position as a term: an index, a keyword, or e(Position, Element) for an
    element of a tuple literal there (`whole`: the tuple's own position)."""
    at = str(item.position) if isinstance(item.position, int) else q(item.position)
    return at if item.element is None or whole else f"e({at}, {item.element})"


def _input_literals(x: str, pos: str, item: Input, variables: dict, xs: list[str]) -> list[str]:
    if item.arg.const is not None or item.arg.code is not None:
        literal = (f"input_const({x}, {pos}, {q(item.arg.const)})" if item.arg.const is not None
                   else f"input_text({x}, {pos}, {q(item.arg.code)})")
        return [f"not {literal}" if item.negated else literal]
    info = variables[item.arg.var]
    if info.producer is not None and item.arg.part is not None:  # `$p[:half]` of a node's output $p
        kind, which = item.arg.part
        return [f"input_{kind}({x}, {pos}, {which}, node({xs[info.producer]}))"]
    source = _edge_source(item, variables)
    if source is not None:
        return [f"input_from({x}, {pos}, {xs[source]})"]
    return [f"has_input({x}, {pos})"]


def _edge_source(item: Input, variables: dict) -> int | None:
    """The node whose whole output the input is (an `input_from` edge), else None."""
    if item.arg.var is None or item.arg.const is not None or item.arg.code is not None or item.arg.part is not None:
        return None
    return variables[item.arg.var].producer


_STRING = re.compile(r'"(?:[^"\\]|\\.)*"')
_VARIABLE = re.compile(r"\b[A-Z][A-Za-z0-9_]*")


def _variables(literal: str) -> list[str]:
    return _VARIABLE.findall(_STRING.sub("", literal))


def _binding_order(fwd: list, variables: dict) -> list[int]:
    """The order in which the chain binds the pattern's nodes: as written, except that a
    node whose every pattern input is already bound comes right after its producers.

    Found as written, `$q($x); $k($x); $v($x) & view($qo) & ...` pairs every two projections of
    one input before asking which of them a head split reads: a long method with many
    projections of one value makes the pairs and triples many. Bound right after its
    producer, a consumer keeps only the nodes it reads. (The candidate's nodes keep the
    pattern's positions: only the join changes.)"""
    producers = [{variables[item.arg.var].producer for item in node.inputs
                  if item.arg.var and variables[item.arg.var].producer is not None} for node in fwd]
    consumers_of: list[list[int]] = [[] for _ in fwd]
    for i, ps in enumerate(producers):
        for p in ps:
            consumers_of[p].append(i)
    missing = [len(ps) for ps in producers]
    # two heaps of ready nodes, the consumers first; a node whose producer comes later in
    # the pattern waits, and when nothing is ready the first waiting node goes (one pass of
    # `next_unplaced` over the pattern): linear but for the heaps, as a long chain rule needs
    ready_consumers: list[int] = []
    ready_free = [i for i, n in enumerate(missing) if n == 0]
    placed = [False] * len(fwd)
    order: list[int] = []
    next_unplaced = 0
    while len(order) < len(fwd):
        heap = ready_consumers or ready_free
        if heap:
            chosen = heapq.heappop(heap)
            if placed[chosen]:
                continue
        else:
            while placed[next_unplaced]:
                next_unplaced += 1
            chosen = next_unplaced
        placed[chosen] = True
        order.append(chosen)
        for c in consumers_of[chosen]:
            missing[c] -= 1
            if missing[c] == 0 and not placed[c]:
                heapq.heappush(ready_consumers, c)
    return order


def _chained(name: str, body: list[str], xs: list[str], cs: list[str], head: str, kept: list[str] = ()) -> list[str]:
    """The candidate rule as a chain of rules, one per pattern node: step k joins the
    partial candidates of step k-1 with node k's literals (and those that need it); `xs` are
    the nodes in the order they are bound.

    Why not one rule: clingo orders a body by guessing literal sizes, which costs time
    quadratic in its length for every file (a long pattern written as one rule runs to over
    a hundred literals, and ordering them would dominate grounding a small file), and its
    guesses can start anywhere in the pattern; a chain follows the pattern's order, with at
    most a node's literals per rule.

    Every literal's variables are read once, and each step is computed from the literals
    that hold a variable: the time grows with the body's length, not with its square.
    """
    body = list(dict.fromkeys(body))  # pairwise literals (keys, equal values) name a middle node twice
    names = [_variables(lit) for lit in body]
    # the step at which each node (Xk: step k) and constructor (with its node's `ctor`
    # literal, else the last step) is bound
    step = {x: k + 1 for k, x in enumerate(xs)}
    last = len(xs)
    ctors, anchored = set(cs), {}
    for lit, variables in zip(body, names):
        if lit.startswith("ctor("):
            node = max(step[v] for v in variables if v in step)
            for v in variables:
                if v in ctors:
                    anchored[v] = min(anchored.get(v, node), node)
    for c in cs:
        step[c] = anchored.get(c, last)
    positive = [not lit.startswith("not ") and not re.search(r"[<>=]", _STRING.sub("", lit)) for lit in body]
    at = [max([step.get(v, 0) for v in variables] + [1]) for variables in names]
    free = [[v for v in variables if v not in step] for variables in names]
    _wait_for_bindings(at, free, positive, last)
    # a variable is carried from step k to k+1 while a later step's literal holds it; the
    # nodes and constructors are carried to the head. `carried` stays sorted (R first) as
    # variables join and leave it, so a step costs what its own literals and its
    # `cand_part` terms cost.
    last_use: dict[str, int] = dict.fromkeys([*xs, *cs, *kept], last + 1) | {"R": 1}
    own: list[list[int]] = [[] for _ in range(last + 1)]
    for i, variables in enumerate(names):
        own[at[i]].append(i)
        for v in variables:
            last_use[v] = max(last_use[v], at[i]) if v in last_use else at[i]
    leaving: dict[int, list[str]] = {}
    for v, k in last_use.items():
        leaving.setdefault(k, []).append(v)
    rules, carried, holding = [], ["R"], {"R"}
    for k in range(1, last + 1):
        previous = [f'cand_part({q(name)}, {k - 1}, {", ".join(carried)})'] if k > 1 else []
        for v in leaving.get(k, ()):
            if v in holding:
                holding.remove(v)
                del carried[bisect.bisect_left(carried, _root_first(v), key=_root_first)]
        for i in own[k]:
            for v in names[i]:
                if v not in holding and last_use[v] > k:
                    holding.add(v)
                    bisect.insort(carried, v, key=_root_first)
        target = head if k == last else f'cand_part({q(name)}, {k}, {", ".join(carried)})'
        rules.append(f"{target} :- {', '.join(previous + [body[i] for i in own[k]])}.")
    return rules


def _root_first(variable: str) -> tuple[bool, str]:
    return variable != "R", variable


def _wait_for_bindings(at: list[int], free: list[list[str]], positive: list[bool], last: int) -> None:
    """Move literals to later steps (in place) until each one's variables are bound.

    A variable other than a node or constructor is bound at the earliest step of a positive
    literal holding it (at most the last step); a literal using it waits for that step.
    Steps only grow, so this ends; only the literals of a variable whose step moved are
    looked at again.
    """
    users: dict[str, list[int]] = {}
    binders: dict[str, list[tuple[int, int]]] = {}  # a heap of (step, literal); stale entries are skipped
    for i, variables in enumerate(free):
        for v in variables:
            users.setdefault(v, []).append(i)
            if positive[i]:
                binders.setdefault(v, []).append((at[i], i))
    bound_at: dict[str, int] = {}
    for v, heap in binders.items():
        heapq.heapify(heap)
        bound_at[v] = min(last, heap[0][0])
    pending = list(range(len(at)))
    while pending:
        i = pending.pop()
        wait = max([bound_at.get(v, 0) for v in free[i]] + [at[i]])
        if wait == at[i]:
            continue
        at[i] = wait
        if not positive[i]:
            continue
        for v in free[i]:
            heap = binders[v]
            heapq.heappush(heap, (wait, i))
            while heap[0][0] != at[heap[0][1]]:
                heapq.heappop(heap)
            if min(last, heap[0][0]) != bound_at[v]:
                bound_at[v] = min(last, heap[0][0])
                pending += users[v]
