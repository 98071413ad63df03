"""Which of a pattern's nodes a compiled rule orders, so that a match is the same whatever order
the source computes its nodes in, and is still found once.

A forward pattern is a data-flow graph: the order it is written in means nothing, and a match
needs only its nodes' flow and distinctness. But where two nodes play the same role (the three
projections of fused QKV, each split into heads), every assignment of the code's nodes to the
roles would be a match of its own; ordering the interchangeable nodes by where they run keeps one.
The roles that are interchangeable are the pattern's automorphisms: the permutations of its
nodes that keep every node's label (kind, type, constants, the external variables it reads and
where) and every edge (which node's output each input reads, at which position; either operand
of a commutative operator). Ordering a node before the other nodes of its orbit, then doing the
same within the permutations that fix it (a stabilizer chain: a lex-leader), breaks every
symmetry and loses no match.
"""

from __future__ import annotations

from adopter.rules.model import PatternNode, Rule

COMMUTATIVE = {"+", "*"}  # as match/support.lp's commutative/1: `a Op b` is `b Op a`, bit for bit


def _label(node: PatternNode, rule: Rule, produced: set[str]) -> tuple:
    """What a node must keep under a permutation: everything but which nodes it reads."""
    callee = node.callee or ""
    if callee.startswith("$"):  # a constructed layer: its constructor's types and constants
        ctor = next(c for c in rule.init_source if c.output == callee)
        callee = (ctor.callee, tuple(sorted((str(i.position), i.arg.const or i.arg.code or "", i.negated)
                                            for i in ctor.inputs if i.arg.var is None)))
    inputs = []
    for item in node.inputs:
        position = "operand" if node.kind == "binary" and node.op in COMMUTATIVE else str(item.position)
        if item.arg.var in produced and item.arg.part is None:
            continue  # an edge: _edges
        inputs.append((position, item.element, item.negated, item.arg.var, item.arg.const, item.arg.code, item.arg.part))
    return node.kind, node.op, callee, tuple(sorted(inputs, key=repr))


def _edges(nodes: list[PatternNode], producer: dict[str, int]) -> set[tuple[int, int, str, int | None]]:
    """(source, node, position, element): node's input at position reads source's output."""
    edges = set()
    for i, node in enumerate(nodes):
        for item in node.inputs:
            if item.arg.var in producer and item.arg.part is None:
                position = "operand" if node.kind == "binary" and node.op in COMMUTATIVE else str(item.position)
                edges.add((producer[item.arg.var], i, position, item.element))
    return edges


def automorphisms(rule: Rule) -> list[tuple[int, ...]]:
    """Every permutation of the forward pattern's nodes that keeps labels and edges."""
    nodes = rule.forward_source
    producer = {node.output: i for i, node in enumerate(nodes) if node.output}
    labels = [_label(node, rule, set(producer)) for node in nodes]
    edges = _edges(nodes, producer)
    n, found = len(nodes), []

    def extend(image: list[int]) -> None:
        i = len(image)
        if i == n:
            found.append(tuple(image))
            return
        for j in range(n):
            if j in image or labels[j] != labels[i]:
                continue
            image.append(j)
            # every edge between nodes mapped so far maps to an edge
            if all((image[a], image[b], p, e) in edges for a, b, p, e in edges if a <= i and b <= i and i in (a, b)):
                extend(image)
            image.pop()

    extend([])
    return found


def ordered_pairs(rule: Rule) -> list[tuple[int, int]]:
    """(i, j): node i must run before node j (`Ki < Kj`), to find each match once; the other
    nodes are in any order."""
    group = automorphisms(rule)
    pairs = []
    for i in range(len(rule.forward_source)):
        orbit = sorted({sigma[i] for sigma in group} - {i})
        pairs += [(i, j) for j in orbit]
        group = [sigma for sigma in group if sigma[i] == i]
    return pairs
