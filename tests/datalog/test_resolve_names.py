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


def _qnames_of_name(code: str, identifier: str) -> dict[int, set[str]]:
    """The qualified names of each load of `identifier`, by line (the snippet's lines from 1),
    worked out in a child process with 1 GB of address space: a resolution without end fails
    there (as an exception), not by exhausting the machine."""
    import json
    import os
    import resource

    from conftest import facts_of
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(read)
        try:
            resource.setrlimit(resource.RLIMIT_AS, (1 << 30, 1 << 30))
            answer = sorted(relation(code, "qname"))
        except BaseException as error:  # noqa: BLE001 (the parent raises it)
            answer = f"the resolution failed: {error!r}"
        os.write(write, json.dumps(answer).encode())
        os._exit(0)
    os.close(write)
    with os.fdopen(read) as pipe:
        answer = json.loads(pipe.read() or '"the child died"')
    os.waitpid(pid, 0)
    assert not isinstance(answer, str), answer
    facts = facts_of(code)
    loads = {e for e, n, ctx in facts.rows["name"] if n == identifier and ctx == "load"}
    lines = {row[0]: row[3] for row in facts.rows["expr"]}
    out: dict[int, set[str]] = {}
    for e, q in answer:
        if int(e) in loads:
            out.setdefault(lines[int(e)], set()).add(q)
    return out


def test_a_module_name_assigned_its_own_attribute_resolves_without_end():
    # `import X` then `X = X.Y` (six.py, vendored widely): the value's X is the module; a
    # function, which runs later, sees both. The loop X.Y.Y... once made grounding exhaust memory.
    code = """
    import StringIO
    StringIO = StringIO.StringIO
    def make():
        return StringIO()
    """
    found = _qnames_of_name(code, "StringIO")
    assert found == {3: {"StringIO"}, 5: {"StringIO", "StringIO.StringIO"}}


def test_a_module_level_value_sees_only_the_assignments_before_it():
    code = """
    import torch
    Layer = torch.nn
    Layer = Layer.Linear
    Other = Layer
    """
    found = _qnames_of_name(code, "Layer")
    assert found == {4: {"torch.nn"}, 5: {"torch.nn", "torch.nn.Linear"}}
