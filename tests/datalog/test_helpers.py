"""adopter/datalog/flow/contexts.lp: `self.helper(...)` calls bring the helper's nodes into the caller."""

from conftest import structures_of

CODE = """
import torch
from torch import nn
class Attn(nn.Module):
    def __init__(self):
        self.q = nn.Linear(4, 4)
        self.k = nn.Linear(4, 4)
    def split(self, t):
        return t.view(2, 2)
    def scores(self, a, b):
        return torch.matmul(a, b)
    def forward(self, x):
        q = self.split(self.q(x))
        k = self.split(t=self.k(x))
        return self.scores(q, k)
"""


def test_helper_nodes_appear_in_the_callers_structure_with_bound_arguments():
    assert structures_of(CODE, "Attn") == [
        "torch.nn.Linear(x) -> t1; torch.Tensor.view(t1, 2, 2) -> q; "
        "torch.nn.Linear(x) -> t2; torch.Tensor.view(t2, 2, 2) -> k; torch.matmul(q, k) -> t3"]


def test_inherited_helpers_are_inlined_and_recursion_is_bounded():
    code = """
    import torch
    class Base:
        def helper(self, x):
            return self.helper(torch.relu(x))
    class Child(Base):
        def forward(self, x):
            return self.helper(x)
    """
    (structure,) = structures_of(code, "Child")
    assert structure.count("torch.relu") == 3  # depth bound: max_inline_depth
