"""match/support.lp's parts of inputs: a tuple literal's elements as inputs e(P, J) where a rule
asks (`elements_asked`), and halves of a value's last dimension (`input_half/4`, where a rule
writes `$x[:half]`), through names, `chunk` and `unflatten(...).unbind(...)` unpacking and a
module-level helper's parameters, and its pairs' items (`input_parity/4`, `$x[::2]`).
A table of tiny programs: the body of `rotate(x)` -> the halves the negation and the
concatenation read (node type, input, half), all of the value `forward` passes."""

import pytest

from conftest import facts_of
from adopter.datalog.engine import MAIN_PROGRAM, MATCH_PROGRAMS, solve

ASKED = 'halves_asked. pattern_type("-"). pattern_type("torch.cat"). elements_asked("torch.cat", 0).'


def _source(body: str, call: str = "rotate(q)") -> str:
    lines = "\n".join("        " + line for line in body.splitlines())
    return f"""
    import torch
    from torch import nn
    def rotate(x):
{lines}
    class M(nn.Module):
        def __init__(self):
            super().__init__()
            self.proj = nn.Linear(4, 4)
        def forward(self, h):
            q = self.proj(h)
            return {call}
"""


CASES = [
    ("x1 = x[..., : x.shape[-1] // 2]\nx2 = x[..., x.shape[-1] // 2 :]\nreturn torch.cat((-x2, x1), dim=-1)",
     {("-", "0", 1), ("torch.cat", "e(0,1)", 0)}),
    ("x1, x2 = x.chunk(2, dim=-1)\nreturn torch.cat((-x2, x1), dim=-1)", {("-", "0", 1), ("torch.cat", "e(0,1)", 0)}),
    ("x1, x2 = torch.chunk(x, 2, -1)\nreturn torch.cat([-x2, x1], dim=-1)", {("-", "0", 1), ("torch.cat", "e(0,1)", 0)}),
    # written in place, no names
    ("return torch.cat((-x[..., x.shape[-1] // 2 :], x[..., : x.shape[-1] // 2]), dim=-1)",
     {("-", "0", 1), ("torch.cat", "e(0,1)", 0)}),
    # not halves of the last dimension: every other entry, the first dimension, three chunks,
    # chunks along dim 0, a size of another tensor, a step
    ("x1 = x[..., ::2]\nx2 = x[..., 1::2]\nreturn torch.cat((-x2, x1), dim=-1)", set()),
    ("x1 = x[: x.shape[0] // 2]\nx2 = x[x.shape[0] // 2 :]\nreturn torch.cat((-x2, x1), dim=-1)", set()),
    ("x1, x2, x3 = x.chunk(3, dim=-1)\nreturn torch.cat((-x2, x1), dim=-1)", set()),
    ("x1, x2 = x.chunk(2, dim=0)\nreturn torch.cat((-x2, x1), dim=-1)", set()),
    ("x1 = x[..., : q.shape[-1] // 2]\nx2 = x[..., q.shape[-1] // 2 :]\nreturn torch.cat((-x2, x1), dim=-1)", set()),
    ("x1 = x[..., : x.shape[-1] // 2 : 1]\nx2 = x[..., x.shape[-1] // 2 :]\nreturn torch.cat((-x2, x1), dim=-1)",
     {("-", "0", 1)}),
    # the last dimension split into two rows, unbound along them (through a name, or in place)
    ("x = x.unflatten(-1, (2, -1))\nx1, x2 = x.unbind(-2)\nreturn torch.cat((-x2, x1), dim=-1)",
     {("-", "0", 1), ("torch.cat", "e(0,1)", 0)}),
    ("x1, x2 = x.unflatten(-1, (2, -1)).unbind(dim=-2)\nreturn torch.cat((-x2, x1), dim=-1)",
     {("-", "0", 1), ("torch.cat", "e(0,1)", 0)}),
    # not halves: unbound along the columns, split into pairs, a split of another dimension
    ("x1, x2 = x.unflatten(-1, (2, -1)).unbind(-1)\nreturn torch.cat((-x2, x1), dim=-1)", set()),
    ("x1, x2 = x.unflatten(-1, (-1, 2)).unbind(-2)\nreturn torch.cat((-x2, x1), dim=-1)", set()),
    ("x1, x2 = x.unflatten(1, (2, -1)).unbind(-2)\nreturn torch.cat((-x2, x1), dim=-1)", set()),
]


def _parts(source: str, asked: str = ASKED, relation: str = "input_half"):
    """(node type, input position, which part, value) of each `relation` row (input_half/4 or
    input_parity/4) where the compiled-rule facts `asked` ask for them, and the model."""
    model = solve(facts_of(source), extra_program=asked, programs=(MAIN_PROGRAM, *MATCH_PROGRAMS),
                  keep={relation, "node_type", "node_site", "input_value", "call"})
    types = {x: t.string for x, t in model.get("node_type")}
    return {(types[x], str(p), h.number, v) for x, p, h, v in model.get(relation)}, model


@pytest.mark.parametrize(("body", "expected"), CASES, ids=[str(i) for i in range(len(CASES))])
def test_halves_of_the_last_dimension(body, expected):
    halves, _model = _parts(_source(body))
    assert {(t, p, h) for t, p, h, _ in halves} == expected
    # every half is of q, the projection's output, which forward passes to rotate(x)
    assert {str(v).split("(")[0] for *_, v in halves} <= {"node"} and len({v for *_, v in halves}) <= 1


def test_a_half_is_of_the_callers_value_through_a_parameter_not_of_the_parameter():
    # forward's own parameter (no node computes it): the value is the caller's definition of h
    halves, _ = _parts(_source("x1, x2 = x.chunk(2, dim=-1)\nreturn torch.cat((-x2, x1), dim=-1)", call="rotate(h)"))
    assert {str(v).startswith("def(r(") for *_, v in halves} == {True}


def test_tuple_elements_are_inputs_only_where_a_rule_asks():
    source = _source("return torch.cat((-x, x), dim=-1)")
    asked = solve(facts_of(source), extra_program=ASKED, programs=(MAIN_PROGRAM, *MATCH_PROGRAMS), keep={"input_from"})
    positions = {str(p) for _x, p, _y in asked.get("input_from")}
    assert "e(0,0)" in positions
    plain = solve(facts_of(source), extra_program='pattern_type("-"). pattern_type("torch.cat").',
                  programs=(MAIN_PROGRAM, *MATCH_PROGRAMS), keep={"input_from"})
    assert not {str(p) for _x, p, _y in plain.get("input_from")} & {"e(0,0)", "e(0,1)"}


PAIRS_ASKED = 'parities_asked. pattern_type("-"). pattern_type("torch.stack"). elements_asked("torch.stack", 0).'

PAIR_CASES = [
    ("x1 = x[..., ::2]\nx2 = x[..., 1::2]\nreturn torch.stack((-x2, x1), dim=-1)", {("-", "0", 1), ("torch.stack", "e(0,1)", 0)}),
    # the last dimension split into pairs, unbound along them
    ("a, b = x.unflatten(-1, (-1, 2)).unbind(-1)\nreturn torch.stack((-b, a), dim=-1)",
     {("-", "0", 1), ("torch.stack", "e(0,1)", 0)}),
    ("a, b = x.reshape(*x.shape[:-1], -1, 2).unbind(-1)\nreturn torch.stack((-b, a), dim=-1)",
     {("-", "0", 1), ("torch.stack", "e(0,1)", 0)}),
    # a cast of x keeps its shape
    ("a, b = x.float().reshape(*x.shape[:-1], -1, 2).unbind(-1)\nreturn torch.stack((-b, a), dim=-1)",
     {("-", "0", 1), ("torch.stack", "e(0,1)", 0)}),
    # not pairs of the last dimension: another tensor's leading shape, a leading dimension dropped,
    # a third size, halves, another dimension split
    ("a, b = x.reshape(*h.shape[:-1], -1, 2).unbind(-1)\nreturn torch.stack((-b, a), dim=-1)", set()),
    ("a, b = x.reshape(*x.shape[:-2], -1, 2).unbind(-1)\nreturn torch.stack((-b, a), dim=-1)", set()),
    ("a, b = x.reshape(*x.shape[:-1], -1, 2, 1).unbind(-1)\nreturn torch.stack((-b, a), dim=-1)", set()),
    ("a, b = x.unflatten(-1, (2, -1)).unbind(-1)\nreturn torch.stack((-b, a), dim=-1)", set()),
    ("a, b = x.unflatten(2, (-1, 2)).unbind(-1)\nreturn torch.stack((-b, a), dim=-1)", set()),
]


@pytest.mark.parametrize(("body", "expected"), PAIR_CASES, ids=[str(i) for i in range(len(PAIR_CASES))])
def test_pairs_of_the_last_dimension(body, expected):
    pairs, _model = _parts(_source(body), PAIRS_ASKED, "input_parity")
    assert {(t, p, h) for t, p, h, _ in pairs} == expected
    # every item is of one value: q, or its cast
    assert len({v for *_, v in pairs}) <= 1
