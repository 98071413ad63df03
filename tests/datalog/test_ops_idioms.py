"""ops/idioms.lp and the spellings that fix an input: where a node is `torch.pow` and which
exponent it has (node_op/2, implied_input/3 seen through support.lp's input_const/3). One row
per spelling: the source line, whether it is a power, and its exponent."""

import pytest

from conftest import facts_of
from adopter.datalog.engine import MAIN_PROGRAM, MATCH_PROGRAMS, solve

HEADER = """
import torch
import torch.nn as nn
class M(nn.Module):
    def forward(self, x, y):
        h = x
        r = {line}
        return r
"""
POW = "torch.pow"
TABLE = [
    ("torch.pow(x, 2)", {"2"}),
    ("x.pow(2)", {"2"}),
    ("x ** 2", {"2"}),
    ("x ** 3", {"3"}),
    ("x.square()", {"2"}),                # the spelling fixes the exponent
    ("torch.square(x)", {"2"}),
    ("x * x", {"2"}),                     # a value times itself
    ("x * h", {"2"}),                     # ... also through a copy of its name
    ("(x + 1) * (x + 1)", None),          # two nodes, two values
    ("x * y", None),
    ("x.mul(x)", None),                   # a method product: not an idiom the table lists
]


@pytest.mark.parametrize("line, exponents", TABLE, ids=[line for line, _ in TABLE])
def test_every_spelling_of_a_power_is_one_and_has_its_exponent(line, exponents):
    # (a rule naming torch.pow makes each of its spellings a pattern type, as a compiled rule declares)
    types = ("torch.pow", "torch.Tensor.pow", "**", "torch.square", "torch.Tensor.square", "*", "torch.Tensor.mul")
    model = solve(facts_of(HEADER.format(line=line)), extra_program="\n".join(f'pattern_type("{t}").' for t in types),
                  programs=(MAIN_PROGRAM, *MATCH_PROGRAMS), keep={"node_op", "input_const"})
    powers = {str(x) for x, op in model.get("node_op") if op.string == POW}
    assert len(powers) == (1 if exponents else 0)
    if exponents:
        assert {c.string for x, pos, c in model.get("input_const") if str(x) in powers and str(pos) == "1"} == exponents


FLATTEN_TABLE = [
    ("x.flatten(-2)", True),
    ("torch.flatten(x, -2)", True),
    ("rearrange(x, '... d r -> ... (d r)')", True),      # einops, the last two axes merged in order
    ("rearrange(x, '... d r -> ... (r d)')", False),     # merged the other way round: a transpose first
    ("rearrange(x, 'b d r -> b (d r)')", False),         # named leading axes: not known to be all of them
    ("rearrange(x, '... d r -> ... d r')", False),
    ("rearrange(x, '... (d r) -> ... d r', r=2)", False),
]


@pytest.mark.parametrize("line, flattens", FLATTEN_TABLE, ids=[line for line, _ in FLATTEN_TABLE])
def test_an_einops_rearrangement_merging_the_last_two_axes_is_a_flatten(line, flattens):
    source = "from einops import rearrange\n" + HEADER.format(line=line)
    types = ("torch.flatten", "torch.Tensor.flatten", "einops.rearrange")
    model = solve(facts_of(source), extra_program="\n".join(f'pattern_type("{t}").' for t in types),
                  programs=(MAIN_PROGRAM, *MATCH_PROGRAMS), keep={"node_op"})
    assert any(op.string == "torch.flatten" for _x, op in model.get("node_op")) == flattens
