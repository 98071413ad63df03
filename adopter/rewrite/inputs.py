"""The expression a pattern node's input is, in a matched call or operation."""

from __future__ import annotations

import dataclasses

import libcst as cst

from adopter.records import NodeSite
from adopter.rewrite.adapters import code
from adopter.rewrite.unsafe import Unsafe
from adopter.rules.model import Input, PatternNode
from adopter.catalogue import input_keywords

TENSOR_METHOD = "torch.Tensor."  # a pattern callee under it is written as a method call


def keywords_at(callees: tuple[str, ...], position) -> set[str]:
    """The keywords that pass input `position` of a call of `callees` (their signatures)."""
    if not isinstance(position, int):
        return set()
    return {keyword for callee in callees for keyword, at in input_keywords().get(callee, ()) if at == position}


def matched_input(node: cst.CSTNode, item: Input, pattern: PatternNode, site: NodeSite) -> cst.BaseExpression:
    """The expression input `item` of `pattern` is in the matched `node`, read as the code spells
    it: a node of a canonical operation is written in its own spelling (`torch.pow(x, 2)` for a
    pattern's `torch.Tensor.pow($x, 2)`), which the analysis reports with the site."""
    if not site.spelling:
        method = pattern.kind == "layer" and (pattern.callee or "").startswith(TENSOR_METHOD)
        callees = pattern.callees if pattern.kind == "layer" else ()
        return pattern_input(node, item, method, keywords_at(callees, item.position))
    return pattern_input(node, item, site.form == "method", keywords_at((site.spelling,), item.position))


def pattern_input(node: cst.CSTNode, item: Input, method: bool = False, keywords: set[str] = frozenset()) -> cst.BaseExpression:
    """The argument (or operand) `item` names, positional or passed by one of `keywords`; Unsafe
    when the call does not spell it plainly. An element of a tuple input is that element."""
    if item.element is not None:
        whole = pattern_input(node, dataclasses.replace(item, element=None), method, keywords)
        if not isinstance(whole, (cst.Tuple, cst.List)) or item.element >= len(whole.elements):
            raise Unsafe(f"`{code(whole)}` is not a tuple with an element {item.element}")
        return whole.elements[item.element].value
    if isinstance(node, cst.BinaryOperation):
        return node.left if item.position == 0 else node.right
    if isinstance(node, cst.UnaryOperation):
        return node.expression
    assert isinstance(node, cst.Call)
    if method and isinstance(item.position, int):  # `x.pow(2)` is `torch.Tensor.pow(x, 2)`
        if not isinstance(node.func, cst.Attribute):
            raise Unsafe(f"`{code(node)}` is not a method call")
        if item.position == 0:
            return node.func.value
        item = dataclasses.replace(item, position=item.position - 1)
    if isinstance(item.position, str):
        for a in node.args:
            if a.keyword is not None and a.keyword.value == item.position:
                return a.value
        raise Unsafe(f"no argument {item.position}= in `{code(node)}`")
    positional = [a for a in node.args if a.keyword is None]
    named = [a for a in node.args if a.keyword is not None and a.keyword.value in keywords]
    if named and not any(a.star for a in node.args) and item.position >= len(positional):
        return named[0].value
    if any(a.star for a in node.args) or item.position >= len(positional):
        raise Unsafe(f"argument {item.position + 1} of `{code(node)}` is not a plain positional argument")
    return positional[item.position].value
