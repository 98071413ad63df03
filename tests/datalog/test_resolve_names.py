"""adopter/datalog/resolve/names.lp: import aliases resolve to one qualified name."""

from conftest import relation, structures_of

SOFTMAX_ALIASES = """
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.nn import functional
from torch import nn as tnn

class M(nn.Module):
    def forward(self, x):
        a = F.softmax(x, dim=-1)
        b = nn.functional.softmax(x, dim=-1)
        c = torch.nn.functional.softmax(x, dim=-1)
        d = functional.softmax(x, dim=-1)
        e = tnn.functional.softmax(x, dim=-1)
        return a
"""


def test_every_alias_of_softmax_resolves_to_one_qualified_name():
    (structure,) = structures_of(SOFTMAX_ALIASES, "M")
    nodes = structure.split("; ")
    assert len(nodes) == 5
    assert all(n.startswith("torch.nn.functional.softmax(x, dim=-1)") for n in nodes)


def test_a_local_variable_shadows_an_imported_name():
    code = """
    import torch.nn.functional as F
    class M:
        def forward(self, x, F):
            return F.softmax(x)
    """
    assert not any(q == "torch.nn.functional.softmax" for _, q in relation(code, "qname"))


def test_relative_imports_and_module_level_aliases_resolve():
    code = """
    from torch import nn
    from ...activations import ACT2FN
    BertLayerNorm = nn.LayerNorm
    class M(nn.Module):
        def __init__(self):
            self.norm = BertLayerNorm(4)
            self.act = ACT2FN["gelu"]
        def forward(self, x):
            return self.act(self.norm(x))
    """
    facts = relation(code, "qname")
    names = {q for _, q in facts}
    assert "torch.nn.LayerNorm" in names
    (structure,) = structures_of(code, "M")
    assert structure == "torch.nn.LayerNorm(x) -> t1; ACT2FN(t1) -> t2".replace("ACT2FN", _act2fn_of_snippet())


def _act2fn_of_snippet() -> str:
    # snippet.py is module `snippet`; `from ...activations` climbs above it, leaving `activations`
    return "activations.ACT2FN"


def test_conditional_imports_give_several_answers():
    code = """
    try:
        from apex.normalization import FusedLayerNorm as LayerNorm
    except ImportError:
        from torch.nn import LayerNorm
    x = LayerNorm
    """
    answers = {q for n, q in relation(code, "global_binding") if n == "LayerNorm"}
    assert answers == {"apex.normalization.FusedLayerNorm", "torch.nn.LayerNorm"}
