"""match/checks.lp and match/report.lp: what a match record carries, decided in Datalog
(eager_absorbed/2: which outside reads another read covers; report_other_use/6: calls of
a matched constructor's object that are none of the match's nodes)."""

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
