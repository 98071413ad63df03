"""types/wrappers.lp: which classes of a file project as the layer they hold does (wraps/2), and
which constructions a pattern's `~torch.nn.Linear()` takes (wrapped_type/2). One row per class
body: its forward, and whether it wraps a Linear."""

import pytest

from conftest import facts_of
from adopter.datalog.engine import solve

HEADER = """
import torch
from torch import nn
class W(nn.Module):
    def __init__(self):
        super().__init__()
        self.linear = nn.Linear(4, 4)
        self.other = nn.Linear(4, 4)
        self.scale = nn.Parameter(torch.ones(4))
    def forward(self, x, y=None):
{body}
class User(nn.Module):
    def __init__(self):
        super().__init__()
        self.direct = W()
        self.built = make()
        self.plain = nn.Linear(4, 4)
def make():
    return W()
"""
TABLE = [
    ("return self.linear(x)", True),
    ("return self.scale * (self.linear(x) + self.scale)", True),            # litgpt's AdapterV2Linear
    ("h = self.linear(x)\n        if y is None:\n            return h\n        return h + x @ self.scale", True),  # LoRA
    ("return self.linear(x).float()", True),                                # a cast is element-wise
    ("return self.linear(y)", False),                                       # another input
    ("return self.other(self.linear(x))", False),                           # a Linear of a Linear: another layer last
    ("if y is None:\n            return x\n        return self.linear(x)", False),   # one return is no projection
    ("return self.linear(x).sum()", False),                                 # a reduction
    ("if y is None:\n            x = x.clamp(0, 1)\n        return self.linear(x)", False),  # the input changed first
]


@pytest.mark.parametrize("body, wraps", TABLE, ids=[body.split("\n")[0] for body, _ in TABLE])
def test_a_class_wraps_a_linear_where_every_return_projects_its_input(body, wraps):
    source = HEADER.format(body="        " + body)
    model = solve(facts_of(source), extra_program='wrap_asked("torch.nn.Linear").', keep={"wraps", "wrapped_type", "call"})
    assert bool(model.get("wraps")) == wraps
    # the three nn.Linear constructions, and where W wraps one: User's W(), its make() and the W() that returns
    typed = {str(e) for e, t in model.get("wrapped_type")}
    assert len(typed) == 3 + 3 * wraps
