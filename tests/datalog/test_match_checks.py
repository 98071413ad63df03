"""match/checks.lp: a candidate whose layers cannot all exist on one run of `__init__`, or
whose layer exists only under the opposite of the guard it is called under, is no match."""

import textwrap

import pytest

from conftest import facts_of
from adopter.matches.build import scan_facts
from adopter.rules.registry import load_rules

GUARDED_BN = """
    import torch.nn as nn
    class M(nn.Module):
        def __init__(self, d, use_bn):
            super().__init__()
            self.use_bn = use_bn
            self.conv = nn.Conv2d(d, d, 3)
            if self.use_bn:
                self.bn = nn.BatchNorm2d(d)
        def forward(self, x):
            y = self.conv(x)
            if FORWARD_TEST:
                y = self.bn(y)
            return y
"""


def _lines(code: str, rule: str) -> list[int]:
    return [m.line for m in scan_facts(facts_of(code), load_rules([rule]))]


@pytest.mark.parametrize("test, found", [
    ("not self.use_bn", False),   # built only when use_bn, called only when not: never both
    ("self.use_bn", True),
    ("x.dim() == 4", True),       # a guard on something else says nothing of the construction
])
def test_a_layer_built_under_a_guard_is_called_only_where_the_guard_may_hold(test, found):
    assert bool(_lines(GUARDED_BN.replace("FORWARD_TEST", test), "conv_batchnorm")) is found


@pytest.mark.parametrize("test, found", [("not self.use_bn", False), ("self.use_bn", True)])
def test_a_parameter_stored_on_self_relates_the_guards_as_the_attribute_does(test, found):
    code = GUARDED_BN.replace("FORWARD_TEST", test).replace("            if self.use_bn:\n", "            if use_bn:\n")
    assert "if use_bn:" in code
    assert bool(_lines(code, "conv_batchnorm")) is found


def test_an_attribute_assigned_after_init_relates_no_guards():
    code = GUARDED_BN.replace("FORWARD_TEST", "not self.use_bn").replace(
        "        def forward(self, x):\n", "        def forward(self, x):\n            self.use_bn = False\n")
    assert _lines(code, "conv_batchnorm") == [12]


EXCLUSIVE = """
    import torch.nn as nn
    from transformers.activations import ACT2FN
    class M(nn.Module):
        def __init__(self, d, fancy):
            super().__init__()
            if fancy:
                self.fc = nn.Linear(d, d)
            ELSE
                self.act = ACT2FN["gelu"]
        def forward(self, x):
            return self.act(self.fc(x))
"""


@pytest.mark.parametrize("between, found", [("else:", False), ("if fancy:", True)])
def test_layers_built_on_paths_of_init_that_exclude_each_other_are_no_match(between, found):
    assert bool(_lines(EXCLUSIVE.replace("ELSE", between), "bias_gelu")) is found


def test_every_rejected_candidate_has_a_failed_check_and_no_match_has_one(zoo):
    # match/checks.lp's `explain` part gives each `bad/1` rule a `failed/4` twin with its
    # evidence: a rule added to one and not the other shows here
    from adopter.datalog.engine import MAIN_PROGRAM, MATCH_PROGRAMS, solve
    from adopter.matches.build import EXPLAIN_PART, rules_program

    program = rules_program(load_rules())
    sources = [(zoo / name).read_text() for name in ("modeling_git.py", "modeling_hubert.py", "modeling_deberta_v2.py",
                                                      "modeling_dpt.py", "modeling_bert.py")]
    sources += [GUARDED_BN.replace("FORWARD_TEST", "not self.use_bn"), EXCLUSIVE.replace("ELSE", "else:")]
    kinds = set()
    for code in sources:
        model = solve(facts_of(code), program, [EXPLAIN_PART], (MAIN_PROGRAM, *MATCH_PROGRAMS),
                      keep={"bad", "failed", "matched"})
        bad = {str(m) for (m,) in model.get("bad")}
        failed = {str(m) for m, *_ in model.get("failed")}
        assert bad == failed
        assert not failed & {str(m) for (m,) in model.get("matched")}
        kinds |= {check.string for _m, check, *_ in model.get("failed")}
    assert {"read outside", "guards differ", "inputs differ", "layer not built", "constructions exclusive"} <= kinds


def test_the_layers_of_one_sequential_call_come_from_one_construction(tmp_path):
    # dpt's readout projections: one attribute, an nn.Sequential built in either of two methods
    code = """
    import torch.nn as nn
    from transformers.activations import ACT2FN
    class M(nn.Module):
        def __init__(self, config):
            super().__init__()
            if config.hybrid:
                self._hybrid(config)
            else:
                self._plain(config)
        def _hybrid(self, config):
            self.readout = nn.Sequential(nn.Linear(8, 8), ACT2FN[config.hidden_act])
        def _plain(self, config):
            self.readout = nn.Sequential(nn.Linear(16, 8), ACT2FN[config.hidden_act])
        def forward(self, x):
            return self.readout(x)
    """
    found = sorted((m.line, m.init_lines) for m in scan_facts(facts_of(code), load_rules(["bias_gelu"])))
    assert found == [(12, [12]), (14, [14])]  # not (14, [12, 14]): a Linear of one call, the activation of the other

    # the mixed candidates fail one check, but at locations that match: no near miss there
    from adopter.api.scan import scan
    path = tmp_path / "m.py"
    path.write_text(textwrap.dedent(code))
    result = scan([str(path)], load_rules(["bias_gelu"]), jobs=1, cache_dir=None, explain=True)
    assert [m.line for m in result.matches] == [12, 14] and result.near_misses == []


def test_a_candidate_that_holds_all_but_one_constant_is_a_near_miss_naming_the_input(tmp_path):
    """`scan --explain` (the compiled rules' explain variants): an input the code passes, leaves
    at a default, leaves out, or computes, where the rule needs a constant."""
    from adopter.api.scan import scan
    path = tmp_path / "m.py"
    path.write_text(textwrap.dedent("""
        import torch
        import torch.nn.functional as F
        from torch import nn
        class A(nn.Module):
            def forward(self, x, q, k, v):
                a = F.normalize(x, p=1, dim=-1) * 3
                b = F.normalize(x) * 3
                c = F.normalize(x, p=2, dim=-1) * 3
                s = torch.matmul(q, k.transpose(-1, -2))
                p = F.softmax(s, dim=x.dim() - 1)
                return a + b + c, torch.matmul(p, v)
    """))
    result = scan([str(path)], load_rules(["rms_norm", "manual_attention"]), jobs=1, cache_dir=None, explain=True)
    assert [(m.rule, m.line) for m in result.matches] == [("rms_norm", 9)]
    assert sorted((m.line, m.check, m.detail, m.detail_line) for m in result.near_misses) == [
        (7, "constant", "p=1, not 2", 7),
        (8, "constant", "dim left out (1), not -1", 0),
        (10, "constant", "dim is computed, not -1", 11)]
