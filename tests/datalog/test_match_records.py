"""match/checks.lp and match/report.lp: what a match record carries, decided in Datalog
(eager_absorbed/2: which outside reads another read covers; report_other_use/6: calls of
a matched constructor's object that are none of the match's nodes; report_lifted/6: where a
node that runs in a helper is reported)."""

from conftest import facts_of

from adopter.datalog.engine import MAIN_PROGRAM, MATCH_PROGRAMS, solve
from adopter.matches.build import rules_program
from adopter.rules.registry import load_rules


def _solve(code: str, rule_id: str, keep: set[str]):
    rules = load_rules([rule_id], cache_dir=None)
    return solve(facts_of(code), rules_program(rules), programs=(MAIN_PROGRAM, *MATCH_PROGRAMS), keep=keep)


DROPOUT_READ_TWICE = """
import torch
class Layer(torch.nn.Module):
    def __init__(self):
        self.dropout = torch.nn.Dropout(0.1)
        self.LayerNorm = torch.nn.LayerNorm(8)
    def forward(self, h, r, a, b):
        x = self.dropout(h)
        out = self.LayerNorm(x + r)
        if a:
            y = x
            if b:
                z = x
        return out
"""


def test_a_read_whose_literals_include_another_reads_is_absorbed():
    model = _solve(DROPOUT_READ_TWICE, "dropout_layernorm", {"match_eager", "eager_absorbed"})
    # `z = x` (line 13) runs under `a and b`, which `y = x` (line 11, under `a`) covers
    assert len(model.get("eager_absorbed")) == 1
    kept = {(row[4], row[5].string, row[6].name) for row in model.get("match_eager")}
    assert {(text, polarity) for _read, text, polarity in kept} == {("a", "pos")}
    assert len({read for read, _text, _polarity in kept}) == 1


def test_reads_with_the_same_literals_keep_one():
    code = DROPOUT_READ_TWICE.replace("            if b:\n                z = x\n", "            z = x\n")
    model = _solve(code, "dropout_layernorm", {"match_eager", "eager_absorbed"})
    kept = {row[4] for row in model.get("match_eager")}
    assert len(kept) == 1 and len(model.get("eager_absorbed")) == 1


CONV_USED_ELSEWHERE = """
import torch
class Block(torch.nn.Module):
    def __init__(self):
        self.conv = torch.nn.Conv2d(3, 8, 3)
        self.bn = torch.nn.BatchNorm2d(8)
    def forward(self, x):
        y = self.bn(self.conv(x))
        return y + self.conv(x)
"""


def test_other_uses_are_the_calls_of_a_matched_object_outside_the_match():
    model = _solve(CONV_USED_ELSEWHERE, "conv_batchnorm", {"report_other_use", "match_ctor"})
    assert len(model.get("match_ctor")) == 2
    uses = {(row[4].number, row[5].number) for row in model.get("report_other_use")}
    line = {row[0]: row[3] for row in facts_of(CONV_USED_ELSEWHERE).rows["expr"]}
    # only `self.conv(x)` on line 9: the conv on line 8 is the match's own node, the bn has no other call
    assert [line[e] for _index, e in uses] == [9]


GELU_IN_A_HELPER = """
import torch
import torch.nn.functional as F
class GEGLU(torch.nn.Module):
    def __init__(self):
        self.proj = torch.nn.Linear(8, 32)
    def gelu(self, gate):
        return F.gelu(gate)
    def forward(self, h):
        x, gate = self.proj(h).chunk(2, dim=-1)
        return x * self.gelu(gate)
"""

ROTATION_IN_A_FUNCTION = """
import torch
def rotate_half(x):
    x1, x2 = x[..., : x.shape[-1] // 2], x[..., x.shape[-1] // 2 :]
    return torch.cat((-x2, x1), dim=-1)
def apply_rotary_pos_emb(q, cos, sin):
    return q * cos + rotate_half(q) * sin
class Attention(torch.nn.Module):
    def forward(self, q, cos, sin):
        return apply_rotary_pos_emb(q, cos, sin)
"""


def _lifted_lines(code: str, rule_id: str) -> set[tuple[int, int]]:
    """(line of the lifted node's own call, line of the call reported for it) per report_lifted row."""
    facts = facts_of(code)
    line_of = {row[0]: row[3] for row in facts.rows["expr"]}
    model = solve(facts, rules_program(load_rules([rule_id], cache_dir=None)), programs=(MAIN_PROGRAM, *MATCH_PROGRAMS),
                  keep={"report_lifted", "node_site"})
    site = {x: e.number for x, _ctx, e in model.get("node_site")}
    return {(line_of[site[x]], line_of[call.number]) for *_key, x, call in model.get("report_lifted")}


def test_a_node_in_a_helper_of_the_last_nodes_function_is_reported_at_the_call():
    # F.gelu (line 8) runs in `gelu`, called at line 11, where the product is
    assert _lifted_lines(GELU_IN_A_HELPER, "swiglu") == {(8, 11)}


def test_lifting_stops_at_the_last_nodes_function():
    # the rotation's last node (the sum) runs in apply_rotary_pos_emb: torch.cat (line 5, in
    # rotate_half) is reported at `rotate_half(q)` (line 7), not at the call in forward (line
    # 10), and the nodes of apply_rotary_pos_emb itself are not lifted at all
    assert _lifted_lines(ROTATION_IN_A_FUNCTION, "rotary") == {(5, 7)}
