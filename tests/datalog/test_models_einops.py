"""datalog/models/einops.lp: which `einops.rearrange` calls split the last dimension of their
input into pairs or halves (last_split/3, read by flow/nodes.lp's paired_item/halved_item), one
row per call: the pattern, its sizes, and the split it makes (None: none)."""

import pytest

from conftest import facts_of
from adopter.datalog.engine import solve

HEADER = """
import einops
from einops import rearrange
def f(x):
    y = {call}
    return y
"""
TABLE = [
    ("rearrange(x, '... (d r) -> ... d r', r=2)", "pairs"),     # x-transformers' rotate_half
    ("rearrange(x, '... (r d) -> ... r d', r=2)", "halves"),
    ("einops.rearrange(x, '...  (d j) -> ... d j', j = 2)", "pairs"),   # any axis names, any spacing
    ("rearrange(x, '... (d r) -> ... d r', r=3)", None),        # triples
    ("rearrange(x, '... (d r) -> ... d r', d=2)", "halves"),    # the first axis of size 2: two halves
    ("rearrange(x, '... (d r) -> ... d r')", None),             # no size given
    ("rearrange(x, 'b (d r) -> b d r', r=2)", None),            # a named leading axis: not every one kept
    ("rearrange(x, '... (d r) -> ... r d', r=2)", None),        # split and transposed
    ("rearrange(x, '... (d r s) -> ... d r s', s=2)", None),    # three axes
    ("x.rearrange('... (d r) -> ... d r', r=2)", None),         # not einops
]


@pytest.mark.parametrize("call, kind", TABLE, ids=[call for call, _ in TABLE])
def test_a_rearrangement_splits_the_last_dimension_as_its_pattern_says(call, kind):
    model = solve(facts_of(HEADER.format(call=call)), keep={"last_split"})
    assert {k.name for _r, _b, k in model.get("last_split")} == ({kind} if kind else set())
