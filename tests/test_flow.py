"""datalog/flow: nested calls unchained, def-use data flow, reassignment breaks a chain."""

from conftest import relation

NESTED = """
from torch import nn
class M(nn.Module):
    def __init__(self):
        self.dropout = nn.Dropout(0.1)
        self.LayerNorm = nn.LayerNorm(4)
    def forward(self, h, r):
        return self.LayerNorm(self.dropout(h) + r)
"""


def _flows_by_type(code: str) -> set[tuple[str, str]]:
    from conftest import facts_of
    from datalog.engine import solve
    model = solve(facts_of(code), keep={"node_type", "feasible_flow"})
    types = {n: t.string for n, t in model.get("node_type")}
    return {(types[a], types[b]) for a, b in model.get("feasible_flow")}


def test_nested_calls_are_unchained_into_connected_nodes():
    assert _flows_by_type(NESTED) == {("torch.nn.Dropout", "+"), ("+", "torch.nn.LayerNorm")}


def test_flow_follows_values_through_assignments_not_names():
    code = """
    from torch import nn
    class M(nn.Module):
        def __init__(self):
            self.a = nn.Linear(2, 2)
            self.b = nn.ReLU()
        def forward(self, x):
            y = self.a(x)
            z = y
            return self.b(z)
    """
    assert _flows_by_type(code) == {("torch.nn.Linear", "torch.nn.ReLU")}


def test_reassignment_breaks_the_chain():
    code = """
    from torch import nn
    class M(nn.Module):
        def __init__(self):
            self.a = nn.Linear(2, 2)
            self.b = nn.ReLU()
        def forward(self, x, other):
            y = self.a(x)
            y = other
            return self.b(y)
    """
    assert _flows_by_type(code) == set()


def test_both_branch_definitions_reach_a_later_use():
    code = """
    from torch import nn
    class M(nn.Module):
        def __init__(self):
            self.a = nn.Linear(2, 2)
            self.n = nn.LayerNorm(2)
            self.b = nn.ReLU()
        def forward(self, x):
            x = self.a(x)
            if self.flag:
                x = self.n(x)
            return self.b(x)
    """
    assert _flows_by_type(code) == {("torch.nn.Linear", "torch.nn.LayerNorm"),
                                    ("torch.nn.LayerNorm", "torch.nn.ReLU"),
                                    ("torch.nn.Linear", "torch.nn.ReLU")}


def test_tensor_methods_and_operators_are_nodes_but_shape_arithmetic_on_config_is_not():
    code = """
    import torch
    class M:
        def forward(self, x):
            n = self.heads * 2
            return torch.matmul(x.transpose(-1, -2), x) / n
    """
    kinds = {k for _, k in relation(code, "node_kind")}
    types = {t for _, t in relation(code, "node_type")}
    assert types == {"torch.Tensor.transpose", "torch.matmul", "/"}
    assert kinds == {"method", "function", "op"}


def test_a_module_level_function_of_the_file_runs_inlined_with_its_parameters_bound():
    # `scale(h, 2.0)` is not a node of its own: its body's nodes join the forward's
    # structure, parameter 0 bound to the first argument (no `self` to skip)
    code = """
    import torch
    from torch import nn
    def scale(x, factor):
        y = torch.tanh(x)
        return y * factor
    class M(nn.Module):
        def __init__(self):
            self.a = nn.Linear(2, 2)
            self.b = nn.ReLU()
        def forward(self, h):
            z = scale(self.a(h), 2.0)
            return self.b(z)
    """
    assert _flows_by_type(code) == {("torch.nn.Linear", "torch.tanh"), ("torch.tanh", "*"), ("*", "torch.nn.ReLU")}
