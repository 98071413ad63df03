"""The Python text of a guard: a disjunction of conjunctions of literals, as the analysis
writes them (a condition's source text and whether it holds; `not c` is `c` negated).
Which literals, in which alternatives, is the analysis' answer (datalog/match/layout.lp);
this module only spells them, keeping the condition's own text (libcst keeps quotes and
spacing)."""

from __future__ import annotations

import libcst as cst

from adopter.records import Literal
from adopter.rewrite.adapters import code
from adopter.rewrite.unsafe import Unsafe


def text(lit: Literal) -> str:
    """Python source that is true exactly when the literal holds."""
    try:
        tree = cst.parse_expression(lit.condition)
    except cst.ParserSyntaxError:  # e.g. a `match` case's literal, which is no expression
        raise Unsafe(f"the condition `{lit.condition}` cannot be re-read") from None
    loose = isinstance(tree, (cst.BooleanOperation, cst.IfExp, cst.Lambda, cst.NamedExpr))
    if lit.holds:
        return f"({code(tree)})" if loose else code(tree)
    if isinstance(tree, cst.Comparison) and len(tree.comparisons) == 1:
        op = tree.comparisons[0].operator
        flipped = _FLIPPED.get(type(op))
        if flipped is not None:
            new = flipped(whitespace_before=op.whitespace_before, whitespace_after=op.whitespace_after)
            return code(tree.with_changes(comparisons=[tree.comparisons[0].with_changes(operator=new)]))
    return f"not ({code(tree)})" if loose else f"not {code(tree)}"


def disjunction(alternatives: list[list[Literal]]) -> list[str]:
    """The text of each alternative (a conjunction), in order, no repeats."""
    parts = []
    for conj in alternatives:
        texts = [text(lit) for lit in conj]
        parts.append(texts[0] if len(texts) == 1 else "(" + " and ".join(texts) + ")")
    return list(dict.fromkeys(parts))


def _is_not(**kw):
    return cst.IsNot(whitespace_between=cst.SimpleWhitespace(" "), **kw)


def _not_in(**kw):
    return cst.NotIn(whitespace_between=cst.SimpleWhitespace(" "), **kw)


_FLIPPED = {cst.Is: _is_not, cst.IsNot: cst.Is, cst.Equal: cst.NotEqual, cst.NotEqual: cst.Equal,
            cst.In: _not_in, cst.NotIn: cst.In}
