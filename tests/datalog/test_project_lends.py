"""project/exports.lp and project/imports.lp: what a file lends the other files of its project
(the layers every instance of each of its classes has, and the constructions that may build
them) and what a subclass in another file makes of what it is lent. One row per way an
`__init__` may build `self.layer`."""

import textwrap

import pytest

from adopter.datalog.engine import MAIN_PROGRAM, MATCH_PROGRAMS, solve
from adopter.extract.python_facts import extract_source
from adopter.matches.build import rules_program, scan_facts
from adopter.records import LentCtor
from adopter.rules.registry import load_rules

def facts_of(code: str, path: str):
    """The facts of a file of package `pkg` (`pkg/base.py` is module `pkg.base`)."""
    return extract_source(textwrap.dedent(code), path, path.removesuffix(".py").replace("/", "."))


BASE = """
import torch.nn as nn
def conv3x3(i, o):
    return nn.Conv2d(i, o, 3, bias=False)
class Block(nn.Module):
    def __init__(self, i, o, flag=False, norm_layer=None):
        super().__init__()
{body}
class Mid(Block):
    pass
class Own(Block):
    def __init__(self):
        super().__init__(1, 2)
        self.layer = nn.Identity()
"""
TABLE = [
    ("self.layer = nn.Conv2d(i, o, 1)", {"torch.nn.Conv2d"}),
    ("self.layer = conv3x3(i, o)", {"torch.nn.Conv2d", "pkg.base.conv3x3"}),              # a builder's construction
    ("if norm_layer is None:\n    norm_layer = nn.BatchNorm2d\nself.layer = norm_layer(o)",
     {"torch.nn.BatchNorm2d"}),                                                          # a parameter's default
    ("if i < 0:\n    raise ValueError(i)\nself.layer = nn.Conv2d(i, o, 1)", {"torch.nn.Conv2d"}),  # after a raise
    ("layer = nn.Conv2d(i, o, 1)\nself.layer = layer", {"torch.nn.Conv2d"}),              # through a name
    ("if flag:\n    self.layer = nn.Conv2d(i, o, 1)", set()),                             # built on some runs only
    ("if flag:\n    return\nself.layer = nn.Conv2d(i, o, 1)", set()),                     # not after an early return
    ("self.layer = nn.Conv2d(i, o, 1)\nif flag:\n    self.layer = nn.Identity()", set()),  # replaced on some runs
    ("layer = nn.Conv2d(i, o, 1) if flag else nn.Identity()\nself.layer = layer",
     {"torch.nn.Conv2d", "torch.nn.Identity"}),                                          # either, whichever runs
]


@pytest.mark.parametrize("body, types", TABLE, ids=[body.split("\n")[0] for body, _ in TABLE])
def test_a_class_lends_the_layers_its_constructor_builds_whenever_it_returns(body, types):
    source = BASE.format(body=textwrap.indent(body, " " * 8))
    model = solve(facts_of(source, "pkg/base.py"), keep={"export_attr"})
    lent = {(q.string, a.string, t.string) for q, a, t, _ctor in model.get("export_attr")}
    # Block's, and the same for Mid, which inherits its constructor; Own builds its own layer
    assert lent == {(cls, "layer", t) for cls in ("pkg.base.Block", "pkg.base.Mid") for t in types} \
        | {("pkg.base.Own", "layer", "torch.nn.Identity")}


def test_a_file_wants_the_bases_it_names_and_does_not_define():
    model = solve(facts_of("""
        import torch.nn as nn
        from .base import Block
        from . import layers
        class A(Block):
            pass
        class B(layers.Norm, A):
            pass
    """, "pkg/quant.py"), keep={"import_wanted"})
    assert {q.string for (q,) in model.get("import_wanted")} == {"pkg.base.Block", "pkg.layers.Norm"}


QUANT = """
import torch.nn as nn
from .base import Block
class QBlock(Block):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.relu = nn.ReLU()
{extra}
    def forward(self, x):
        x = self.conv(x)
        x = self.bn(x)
        return self.relu(x)
class Other(nn.Module):
    def forward(self, x):
        return self.bn(self.conv(x))
"""


def _lent(*rows) -> tuple[LentCtor, ...]:
    return tuple(LentCtor("pkg.base.Block", attr, kind, "pkg/base.py", [line, 8, line, 30], [line, 4, line, 30],
                          "__init__", "Block") for attr, kind, line in rows)


def _scan(extra: str, lent: tuple[LentCtor, ...]):
    facts = facts_of(QUANT.format(extra=extra), "pkg/quant.py")
    facts.lent = {-k: row for k, row in enumerate(lent, 1)}
    facts.rows["import_attr"] = [(k, row.qname, row.attr, row.type) for k, row in facts.lent.items()]
    return [m for m in scan_facts(facts, load_rules(cache_dir=None)) if m.rule == "conv_batchnorm"]


def test_a_subclass_runs_the_layers_its_base_in_another_file_builds():
    (match,) = _scan("", _lent(("conv", "torch.nn.Conv2d", 10), ("bn", "torch.nn.BatchNorm2d", 11)))
    conv_line = QUANT.format(extra="").splitlines().index("        x = self.conv(x)") + 1
    assert (match.class_, match.line) == ("QBlock", conv_line)
    # the constructions are reported where they are, in the other file; none is in this one
    assert [(c.file, c.span[0], c.object) for c in match.ctors] == [("pkg/base.py", 10, "self.conv"),
                                                                     ("pkg/base.py", 11, "self.bn")]
    assert match.init_lines == []


def test_what_the_subclass_builds_itself_or_its_base_does_not_lend_is_not_taken():
    lent = _lent(("conv", "torch.nn.Conv2d", 10), ("bn", "torch.nn.BatchNorm2d", 11))
    assert _scan("        self.bn = nn.Identity()", lent) == []          # the subclass replaces the norm
    assert _scan("", lent[:1]) == []                                     # the norm is not lent
    assert _scan("", _lent(("conv", "torch.nn.Conv2d", 10), ("bn", "torch.nn.LayerNorm", 11))) == []  # another type


ENTRIES = """
import torch.nn.functional as F
def upsample(x, mask):
    return F.softmax(mask, dim=-1) * x
def filt(logits, min_p=0.1):
    probs = logits.softmax(dim=-1)
    return probs * min_p
def gate(x, w1, w3):
    return F.silu(x @ w1) * (x @ w3)
def helper(x):
    return x.softmax(-1)
def caller(x):
    return helper(x)
FILTERS = dict(filt=filt)
USED = [gate]
def uses_table(x):
    return USED[0](x, x, x)
class Head:
    pass
"""


def test_module_level_functions_nothing_in_the_file_names_are_entry_candidates():
    model = solve(facts_of(ENTRIES, "pkg/ops.py"), extra_program=rules_program(load_rules(cache_dir=None)),
                  programs=(MAIN_PROGRAM, *MATCH_PROGRAMS), keep={"entry_candidate"})
    candidates = {q.string for (q,) in model.get("entry_candidate")}
    # helper (called by caller) and gate (in a list a function reads) are run by the file's own
    # code; a `dict(...)` table of candidates is one too; a parameter named like a function
    # (`min_p`) is not a use of it
    assert candidates == {"pkg.ops.upsample", "pkg.ops.filt", "pkg.ops.caller", "pkg.ops.uses_table",
                          "pkg.ops.FILTERS"}


def test_a_candidate_another_file_imports_is_a_root_for_rules_whose_scope_is_functions():
    facts = facts_of(ENTRIES, "pkg/ops.py")
    rules = load_rules(cache_dir=None)

    def softmax_lines(used):
        facts.rows["used_elsewhere"] = [(q,) for q in used]
        return sorted(m.line for m in scan_facts(facts, rules) if m.rule == "softmax")

    lines = ENTRIES.splitlines()
    upsample = lines.index("    return F.softmax(mask, dim=-1) * x") + 1
    filt = lines.index("    probs = logits.softmax(dim=-1)") + 1
    assert softmax_lines(()) == []
    assert softmax_lines(("pkg.ops.upsample",)) == [upsample]
    assert softmax_lines(("pkg.ops.FILTERS",)) == [filt]   # through the table another file imports
    # swiglu's scope is methods: its gated product in an imported function is not reported
    facts.rows["used_elsewhere"] = [("pkg.ops.uses_table",), ("pkg.ops.upsample",)]
    assert [m for m in scan_facts(facts, rules) if m.rule.startswith("swiglu")] == []


def test_in_a_file_without_classes_every_function_its_code_does_not_name_is_a_root():
    facts = facts_of(ENTRIES.replace("class Head:\n    pass\n", ""), "pkg/ops.py")
    lines = ENTRIES.splitlines()
    found = sorted(m.line for m in scan_facts(facts, load_rules(cache_dir=None)) if m.rule == "softmax")
    # upsample and filt; helper's, run by caller (a root), once: helper itself is named, so no root
    assert found == [lines.index(text) + 1 for text in ("    return F.softmax(mask, dim=-1) * x",
                                                         "    probs = logits.softmax(dim=-1)",
                                                         "    return x.softmax(-1)")]
