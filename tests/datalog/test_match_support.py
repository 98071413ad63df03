"""match/support.lp: every rule node gets one evaluation-order key, at every inlining depth."""

from collections import Counter

from conftest import facts_of
from adopter.datalog.engine import MAIN_PROGRAM, MATCH_PROGRAMS, solve

# forward -> a -> b -> c: nodes in contexts of depth 0 to 3 (max_inline_depth)
SOURCE = """
    import torch
    import torch.nn as nn
    class M(nn.Module):
        def forward(self, x):
            y = torch.relu(x)
            return self.a(y) + y
        def a(self, x):
            return self.b(torch.tanh(x))
        def b(self, x):
            return self.c(torch.sigmoid(x))
        def c(self, x):
            return torch.exp(x)
"""


def _plain(symbol):
    return symbol.number if symbol.type.name == "Number" else tuple(_plain(a) for a in symbol.arguments)


def test_every_node_has_one_key_in_evaluation_order():
    # `pattern_any`: a rule with an untyped pattern node makes every node of a rule root a rule node
    model = solve(facts_of(SOURCE), extra_program="pattern_any.", programs=(MAIN_PROGRAM, *MATCH_PROGRAMS),
                  keep={"dl_node", "node_key", "node_type", "rule_root", "node_root"})
    roots = {str(r) for (r,) in model.get("rule_root")}
    in_forward = {x for x, r in model.get("node_root") if str(r) in roots}
    keys = {x: k for x, k in model.get("node_key")}
    assert Counter(x for x, _ in model.get("node_key")) == Counter(in_forward)
    assert len(in_forward) < len(model.get("dl_node"))  # the helpers' own roots hold no rule node
    types = {x: t.string for x, t in model.get("node_type")}
    order = [types[x] for x in sorted(in_forward, key=lambda x: _plain(keys[x]))]
    assert order == ["torch.relu", "torch.tanh", "torch.sigmoid", "torch.exp", "+"]


def test_only_nodes_of_a_type_some_pattern_names_get_keys():
    model = solve(facts_of(SOURCE), extra_program='pattern_type("torch.tanh").', programs=(MAIN_PROGRAM, *MATCH_PROGRAMS),
                  keep={"node_key", "node_type"})
    types = {x: t.string for x, t in model.get("node_type")}
    assert [types[x] for x, _ in model.get("node_key")] == ["torch.tanh"]


# input_const/3: literals as written, the same number in its other form, and a left-out input's default
CONSTANTS = """
    import torch.nn.functional as F
    import torch.nn as nn
    class M(nn.Module):
        def forward(self, x, args, kwargs):
            a = F.normalize(x, dim=-1)
            b = F.normalize(x, 2, -1)
            c = F.normalize(x, p=1.0, dim=-1)
            d = F.normalize(*args)
            e = F.normalize(x, **kwargs)
            return a, b, c, d, e
"""


def test_a_left_out_input_holds_its_default_and_a_number_its_other_form():
    extra = 'pattern_type("torch.nn.functional.normalize"). number_form("2.0", "2"). number_form("1.0", "1").'
    model = solve(facts_of(CONSTANTS), extra_program=extra, programs=(MAIN_PROGRAM, *MATCH_PROGRAMS),
                  keep={"input_const", "node_site", "expr"})
    lines = {x: line.number for x, _k, e in model.get("node_site") for e2, _s, _kind, line, *_ in model.get("expr") if e2 == e}
    p = {}
    for x, pos, value in model.get("input_const"):
        if str(pos) in ('"p"', "1"):
            p.setdefault((lines[x], str(pos)), set()).add(value.string)
    # (lines of CONSTANTS: a=6 ... e=10) the default (2.0, at its keyword and its position) and the
    # rule's form of it; b's `2` as written (no rule writes 2.0); c's `1.0` also as the rule's 1;
    # nothing where *args or **kwargs may pass p
    assert p == {(6, '"p"'): {"2.0", "2"}, (6, "1"): {"2.0", "2"},
                 (7, '"p"'): {"2"}, (7, "1"): {"2"},
                 (8, '"p"'): {"1.0", "1"}, (8, "1"): {"1.0", "1"}}


# input_may_const/3: what a detect-only rule's constants ask
MAY = """
    from functools import partial
    import torch.nn.functional as F
    import torch.nn as nn
    class M(nn.Module):
        def __init__(self, inverted, eps):
            super().__init__()
            dim = -2 if inverted else -1
            inner = partial(F.softmax, dim=dim)
            self.a = partial(inner, dtype=None)
            self.b = partial(inner, dim=0)
        def forward(self, x):
            return self.a(x), self.b(x), F.softmax(x, 1)
"""


def test_an_input_may_be_a_constant_through_a_name_and_a_stored_partial():
    model = solve(facts_of(MAY), extra_program='pattern_type("torch.nn.functional.softmax"). may_consts_asked.',
                  programs=(MAIN_PROGRAM, *MATCH_PROGRAMS), keep={"input_may_const", "input_const", "node_site", "expr"})
    lines = {x: line.number for x, _k, e in model.get("node_site") for e2, _s, _kind, line, *_ in model.get("expr") if e2 == e}
    # self.a: the inner partial's dim, either arm of the name; self.b: its own dim overrides the
    # inner one; the function call: its literal (at its keyword: the catalogue's position 1)
    by_call = {}
    for x, pos, value in model.get("input_may_const"):
        if str(pos) == '"dim"':
            by_call.setdefault(str(x), set()).add(value.string)
    assert sorted(by_call.values(), key=sorted) == sorted([{"-2", "-1"}, {"0"}, {"1"}], key=sorted)
    # a rewrite's constants are the literals themselves: only the function call has one
    assert [v.string for _x, pos, v in model.get("input_const") if str(pos) == '"dim"'] == ["1"]
