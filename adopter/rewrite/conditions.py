"""Guard conditions for guarded rewrites: literals as the analysis writes them (a
condition's source text and whether it holds; `not c` is `c` negated), a little Boolean
simplification, and the Python text of a disjunction of conjunctions.

Literals are compared by their normalised form (`ast.unparse`), and written back in
their original spelling (libcst keeps quotes and spacing).
"""

from __future__ import annotations

import ast

import libcst as cst

from adopter.rewrite.adapters import code
from adopter.rewrite.spans import Unsafe

Literal = tuple[str, bool]  # normalised condition text, whether it holds


def minimal_alternatives(conjunctions) -> list[frozenset]:
    """Alternatives of a disjunction (each a set of literals that all hold), shortest first
    (in their order otherwise), without repeats and without one that includes another
    (`a` already covers `a and b`)."""
    kept: list[frozenset] = []
    for conj in sorted(map(frozenset, conjunctions), key=len):
        if not any(k <= conj for k in kept):
            kept.append(conj)
    return kept


class Conditions:
    """Normalises literals and remembers how each condition was spelled."""

    def __init__(self):
        self.spelling: dict[str, str] = {}

    def literal(self, text: str, holds: bool) -> Literal:
        try:
            tree = cst.parse_expression(text)
        except cst.ParserSyntaxError:
            raise Unsafe(f"the condition `{text}` cannot be re-read") from None
        while isinstance(tree, cst.UnaryOperation) and isinstance(tree.operator, cst.Not):
            tree, holds = tree.expression, not holds
        key = normal(code(tree))
        bare = code(tree.with_changes(lpar=[], rpar=[]))
        self.spelling.setdefault(key, code(tree) if "\n" in bare else bare)  # parentheses hold line breaks
        return key, holds

    def text(self, lit: Literal) -> str:
        """Python source that is true exactly when the literal holds."""
        key, holds = lit
        tree = cst.parse_expression(self.spelling.get(key, key))
        loose = isinstance(tree, (cst.BooleanOperation, cst.IfExp, cst.Lambda, cst.NamedExpr))
        if holds:
            return f"({code(tree)})" if loose else code(tree)
        if isinstance(tree, cst.Comparison) and len(tree.comparisons) == 1:
            op = tree.comparisons[0].operator
            flipped = _FLIPPED.get(type(op))
            if flipped is not None:
                new = flipped(whitespace_before=op.whitespace_before, whitespace_after=op.whitespace_after)
                return code(tree.with_changes(comparisons=[tree.comparisons[0].with_changes(operator=new)]))
        return f"not ({code(tree)})" if loose else f"not {code(tree)}"

    def disjunction(self, alternatives: list[list[Literal]]) -> list[str]:
        """The text of each alternative (a conjunction, as `simplify` leaves them), in order,
        no repeats."""
        parts = []
        for conj in alternatives:
            texts = [self.text(lit) for lit in conj]
            parts.append(texts[0] if len(texts) == 1 else "(" + " and ".join(texts) + ")")
        return list(dict.fromkeys(parts))


def _is_not(**kw):
    return cst.IsNot(whitespace_between=cst.SimpleWhitespace(" "), **kw)


def _not_in(**kw):
    return cst.NotIn(whitespace_between=cst.SimpleWhitespace(" "), **kw)


_FLIPPED = {cst.Is: _is_not, cst.IsNot: cst.Is, cst.Equal: cst.NotEqual, cst.NotEqual: cst.Equal,
            cst.In: _not_in, cst.NotIn: cst.In}


def normal(text: str) -> str:
    try:
        return ast.unparse(ast.parse(text, mode="eval"))
    except SyntaxError as error:
        raise Unsafe(f"the condition `{text}` cannot be re-read: {error.msg}") from None


def _disjuncts(key: str) -> list[str]:
    tree = ast.parse(key, mode="eval").body
    if isinstance(tree, ast.BoolOp) and isinstance(tree.op, ast.Or):
        return [ast.unparse(v) for v in tree.values]
    return []


def simplify(alternatives: list[list[Literal]]) -> list[list[Literal]]:
    """Sound rewrites of `A1 or A2 or ...` (each A a conjunction of literals):
    `a and (a or b)` is `a`; `a or (not a and b)` is `a or b`; a conjunction that includes
    another one is covered by it. An empty conjunction is `True`: the result is then `[[]]`."""
    conjs = [set(c) for c in alternatives]
    for conj in conjs:  # absorption inside a conjunction
        for key, holds in list(conj):
            if holds and any((d, True) in conj for d in _disjuncts(key)):
                conj.discard((key, holds))
    singles = {next(iter(c)) for c in conjs if len(c) == 1}
    for conj in conjs:  # a or (not a and b)
        if len(conj) > 1:
            conj -= {(k, not h) for k, h in singles}
    return [sorted(c) for c in minimal_alternatives(conjs)]


def decided(test: str, known: dict[str, bool]) -> bool | None:
    """The value of an `if` test given the literals the guard fixed, or None if unknown
    (`and`, `or` and `not` are followed; anything else must be a known literal)."""
    tree = ast.parse(normal(test), mode="eval").body

    def value(node) -> bool | None:
        key = ast.unparse(node)
        if key in known:
            return known[key]
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
            inner = value(node.operand)
            return None if inner is None else not inner
        if isinstance(node, ast.BoolOp):
            values = [value(v) for v in node.values]
            stop = isinstance(node.op, ast.Or)  # the value that decides: True for `or`, False for `and`
            if stop in values:
                return stop
            return None if None in values else not stop
        return None

    return value(tree)
