"""ops/canonical.lp: every spelling of an operation is one operation (node_op/2), and a call
whose arguments do not bind to its spelling's parameters is none (misbound/1). One table row
per spelling: the source line, and the operation it computes (None: no operation)."""

import pytest

from conftest import facts_of
from adopter.datalog.engine import MAIN_PROGRAM, MATCH_PROGRAMS, solve

HEADER = """
import functools
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.functional import softmax as sm
class M(nn.Module):
    def __init__(self):
        super().__init__()
        self.attend = nn.Softmax(dim=-1)
        self.attn_fn = functools.partial(F.softmax, dim=-1)
        self.twice = functools.partial(functools.partial(F.softmax, dim=-1), dtype=torch.float32)
        self.gate = F.sigmoid
        self.act = nn.Sigmoid()
    def forward(self, x, y, F2):
        for row, _ in zip(x, y):
            r = {line}
        return r
"""
SOFTMAX, SIGMOID, MEAN = "torch.nn.functional.softmax", "torch.sigmoid", "torch.mean"
TABLE = [
    ("F.softmax(x, dim=-1)", SOFTMAX),
    ("sm(x, -1)", SOFTMAX),
    ("torch.softmax(x, -1)", SOFTMAX),
    ("x.softmax(dim=-1)", SOFTMAX),
    ("(x + y).softmax(-1)", SOFTMAX),
    ("row.softmax(-1)", SOFTMAX),                   # a loop variable over tensors
    ("self.attend(x)", SOFTMAX),                    # a module built in __init__
    ("nn.Softmax(dim=-1)(x)", SOFTMAX),             # ... or where it is called
    ("self.attn_fn(x)", SOFTMAX),                   # functools.partial stored on self
    ("self.twice(x)", SOFTMAX),                     # a partial of a partial
    ("x.log_softmax(-1)", "torch.nn.functional.log_softmax"),  # another operation
    ("nn.Softmax(-1)", None),                       # builds the module, computes nothing
    ("F2.softmax(x, dim=-1)", None),                # `dim` twice: no softmax of F2
    ("torch.sigmoid(x)", SIGMOID),
    ("F.sigmoid(x)", SIGMOID),
    ("x.sigmoid()", SIGMOID),
    ("self.gate(x)", SIGMOID),                      # a function stored on self
    ("self.act(x)", SIGMOID),
    ("x.mean(-1, keepdim=True)", MEAN),
    ("torch.mean(x, dim=-1, keepdim=True)", MEAN),
]


@pytest.mark.parametrize("line, op", TABLE, ids=[line for line, _ in TABLE])
def test_every_spelling_is_its_operation(line, op):
    # (the rules name each operation by a spelling: every spelling is a pattern type, as a compiled rule declares)
    spellings = "\n".join(f'pattern_type("{s}").' for s in ("torch.nn.functional.softmax", "torch.softmax", "torch.Tensor.softmax",
                                                            "torch.nn.Softmax", "torch.Tensor.log_softmax", "torch.sigmoid",
                                                            "torch.nn.functional.sigmoid", "torch.Tensor.sigmoid",
                                                            "torch.nn.Sigmoid", "torch.mean", "torch.Tensor.mean"))
    model = solve(facts_of(HEADER.format(line=line)), extra_program=spellings, programs=(MAIN_PROGRAM, *MATCH_PROGRAMS),
                  keep={"node_op"})
    found = {o.string for _node, o in model.get("node_op")}
    assert found == ({op} if op else set())
