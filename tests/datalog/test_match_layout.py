"""match/layout.lp: the statements around a match, as the rewriter edits them. One table of
tiny programs: the rule, the relation, and its atoms without the match key (Rule, Root,
Nodes, Ctors), as text."""

from __future__ import annotations

import pytest
from conftest import facts_of

from adopter.datalog.engine import MAIN_PROGRAM, MATCH_PROGRAMS, solve
from adopter.matches.build import LAYOUT_PART, rules_program
from adopter.rules.registry import load_rules

HEAD = """
import torch
from adopter_kernels import sdpa_attention
from transformers.activations import ACT2FN
class Layer(torch.nn.Module):
    def __init__(self, config):
        self.dense = torch.nn.Linear(8, 8)
        self.act = ACT2FN[config.hidden_act]
        self.dropout = torch.nn.Dropout(0.1)
        self.LayerNorm = torch.nn.LayerNorm(8)
"""

ATTENTION = """        scores = torch.matmul(q, k.transpose(-1, -2))
        scores = scores / d
        scores = scores + mask
        probs = torch.nn.functional.softmax(scores, dim=-1)
        probs = self.dropout(probs)
        out = torch.matmul(probs, v)
"""


# the mask added under a condition: {test} is the `if` line (or lines) around the add
GUARDED_ADD = ("    def forward(self, q, k, v, d, mask, c):\n"
               "        scores = torch.matmul(q, k.transpose(-1, -2))\n"
               "        scores = scores / d\n"
               "        {test}\n"
               "            scores = scores + mask\n"
               "        probs = torch.nn.functional.softmax(scores, dim=-1)\n"
               "        probs = self.dropout(probs)\n"
               "        out = torch.matmul(probs, v)\n"
               "        return out\n")


def _indent(text: str) -> str:
    return "".join("    " + line if line.strip() else line for line in text.splitlines(keepends=True))


CASES = [
    # rule, forward body, relation, expected atoms (after the key)
    ("bias_gelu", "    def forward(self, h):\n        return self.act(self.dense(h))\n",
     "report_nested", {("0",)}),
    ("bias_gelu", "    def forward(self, h):\n        h = self.dense(h)\n        return self.act(h)\n",
     "report_nested", set()),
    ("bias_gelu", "    def forward(self, h):\n        h = self.dense(h)\n        return self.act(h)\n",
     "report_fold_gap", set()),
    ("bias_gelu", "    def forward(self, h):\n        h = self.dense(h)\n        print(1)\n        return self.act(h)\n",
     "report_fold_gap", {("12", "14")}),
    ("bias_gelu", "    def forward(self, h, c):\n        h = self.dense(h)\n        if c:\n            return self.act(h)\n"
                  "        return h\n",
     "report_fold_into", {("body",)}),
    ("bias_gelu", "    def forward(self, h, c):\n        h = self.dense(h)\n        if c:\n            pass\n        else:\n"
                  "            return self.act(h)\n        return h\n",
     "report_fold_into", {("orelse",)}),
    # an `if` one statement later: the folded statement does not lead into it
    ("bias_gelu", "    def forward(self, h, c):\n        h = self.dense(h)\n        c = 1\n        if c:\n"
                  "            return self.act(h)\n        return h\n",
     "report_fold_into", set()),
    ("manual_attention", "    def forward(self, q, k, v, d, mask):\n" + ATTENTION + "        return out\n",
     "report_fallback_call", set()),
    # the kept original of an earlier guarded rewrite: its other branch calls the kernel
    ("manual_attention", "    def forward(self, q, k, v, d, mask, o):\n        if o:\n" + _indent(ATTENTION)
     + "        else:\n            out = sdpa_attention(q, k, v, mask, d, self.dropout)\n        return out\n",
     "report_fallback_call", {("adopter_kernels.sdpa_attention",)}),
    # a name a guard condition reads, assigned in or after the kept range (line 20)
    ("manual_attention", "    def forward(self, q, k, v, d, mask, o):\n" + ATTENTION
     + "        if o:\n            print(probs)\n        o = None\n        return out\n",
     "report_guard_unstable", {("o", "20")}),
    ("manual_attention", "    def forward(self, q, k, v, d, mask, o):\n" + ATTENTION
     + "        if self.training and o:\n            print(probs)\n        self.training = 1\n        return out\n",
     "report_guard_unstable", {("self.training", "20")}),
    # assigned before the range: the guard sees the value the range sees
    ("manual_attention", "    def forward(self, q, k, v, d, mask, o):\n        o = not o\n" + ATTENTION
     + "        if o:\n            print(probs)\n        return out\n",
     "report_guard_unstable", set()),
    # the kept range: first and last statement holding a matched one (line, col), in the
    # innermost block holding them all, and the literals of the `if`s passed on the way
    ("manual_attention", "    def forward(self, q, k, v, d, mask):\n" + ATTENTION + "        return out\n",
     "report_guard_range", {("12", "8", "17", "8")}),
    ("manual_attention", GUARDED_ADD.format(test="if not c:"), "report_guard_range", {("12", "8", "18", "8")}),
    # the whole attention inside an `if`: that `if`'s body is the block, nothing is required
    ("manual_attention", "    def forward(self, q, k, v, d, mask, c):\n        out = q\n        if c:\n" + _indent(ATTENTION)
     + "        return out\n", "report_guard_range", {("14", "12", "19", "12")}),
    # an `elif` branch is no statement of a block: no block holds all the folded statements
    ("manual_attention", GUARDED_ADD.format(test="if c:\n            pass\n        elif mask is not None:"),
     "report_guard_range", set()),
]


# reads of removed values (scores, probs) under conditions, in the kept range or after it:
# the guard's alternatives, each a set of (text, polarity)
def _reads(*reads: str) -> str:
    return ("    def forward(self, q, k, v, d, mask, a, b, c):\n" + ATTENTION + "".join(reads) + "        return out\n")


GUARDS = [
    # a required literal: the fused copy runs only where `not c` holds
    (GUARDED_ADD.format(test="if not c:"), [{("c", "pos")}]),
    (GUARDED_ADD.format(test="if self.training and c:"), [{("self.training and c", "neg")}]),
    (_reads("        if a:\n            print(probs)\n"), [{("a", "pos")}]),
    # a and (a or b) is a
    (_reads("        if a or b:\n            if a:\n                print(probs)\n"), [{("a", "pos")}]),
    # a or (not a and b) is a or b
    (_reads("        if a:\n            print(probs)\n", "        if not a:\n            if b:\n                print(probs)\n"),
     [{("a", "pos")}, {("b", "pos")}]),
    # a or (a and b) is a (match/checks.lp already leaves the covered read out)
    (_reads("        if a:\n            print(probs)\n", "        if a:\n            if b:\n                print(probs)\n"),
     [{("a", "pos")}]),
    # a or b or (not a and not b) is always true: nothing is left for the fused copy
    (_reads("        if a:\n            print(probs)\n", "        if b:\n            print(probs)\n",
            "        if not a:\n            if not b:\n                print(probs)\n"), "always"),
]


@pytest.mark.parametrize("forward, expected", GUARDS)
def test_guard_alternatives(forward, expected):
    rules = load_rules(["manual_attention"], cache_dir=None)
    model = solve(facts_of(HEAD + forward), rules_program(rules), programs=(MAIN_PROGRAM, *MATCH_PROGRAMS),
                  parts=[LAYOUT_PART], keep={"match_node", "report_guard_alt", "report_guard_always"})
    assert model.get("match_node"), "the rule matches the snippet"
    if expected == "always":
        assert model.get("report_guard_always")
        return
    alternatives: dict = {}
    for *_key, alternative, text, polarity in model.get("report_guard_alt"):
        alternatives.setdefault(str(alternative), set()).add((text.string, polarity.name))
    assert not model.get("report_guard_always")
    assert sorted(alternatives.values(), key=sorted) == sorted(expected, key=sorted)


# the `if`s in the kept range the guard decides (a and b are false on the fused path), and
# what the fused copy cannot keep
DECIDED = ("    def forward(self, q, k, v, d, mask, a, b, c):\n"
           "        scores = torch.matmul(q, k.transpose(-1, -2))\n"
           "        scores = scores / d\n"
           "        if a:\n"
           "            print(scores)\n"
           "        if b:\n"
           "            print(scores)\n"
           "        {test}\n"
           "            x = 1\n"
           "        scores = scores + mask\n"
           "        probs = torch.nn.functional.softmax(scores, dim=-1)\n"
           "        probs = self.dropout(probs)\n"
           "        out = torch.matmul(probs, v)\n"
           "        return out\n")
CASES += [
    ("manual_attention", DECIDED.format(test="if not a and not b:"), "report_fused_branch",
     {("14", "8", "orelse"), ("16", "8", "orelse"), ("18", "8", "body")}),
    ("manual_attention", DECIDED.format(test="if a or (b or c):"), "report_fused_branch",
     {("14", "8", "orelse"), ("16", "8", "orelse")}),
    ("manual_attention", DECIDED.format(test="if not (a or b):"), "report_fused_branch",
     {("14", "8", "orelse"), ("16", "8", "orelse"), ("18", "8", "body")}),
    ("manual_attention", DECIDED.format(test="if c:"), "report_fused_conflict", set()),
    # b is known false only once `not a and b` is simplified to `b` beside `a`
    # (the `if`s the fused path walks into are decided too)
    ("manual_attention", DECIDED.format(test="if a or b:").replace(
        "        if b:\n            print(scores)\n", "        if not a:\n            if b:\n                print(scores)\n"),
     "report_fused_branch", {("14", "8", "orelse"), ("16", "8", "body"), ("17", "12", "orelse"), ("19", "8", "orelse")}),
    # a nested function's own `scores` is a name the fused copy no longer defines
    ("manual_attention", DECIDED.format(test="def helper(scores):\n            return scores\n        if c:"),
     "report_fused_conflict", {("18", "names", "scores")}),
]

# a folded statement goes whole: it must be `name = <the node's call>`, alone on its line
FOLD = "    def forward(self, h):\n        {statement}\n        return self.act(h)\n"
CASES += [
    ("bias_gelu", FOLD.format(statement="h = self.dense(h)"), "report_fold_unfit", set()),
    ("bias_gelu", FOLD.format(statement="h = g = self.dense(h)"), "report_fold_unfit", {("0", "12")}),
    ("bias_gelu", FOLD.format(statement="h: torch.Tensor = self.dense(h)"), "report_fold_unfit", {("0", "12")}),
    ("bias_gelu", FOLD.format(statement="h = self.dense(h); g = 1"), "report_fold_unfit", {("0", "12")}),
    ("bias_gelu", FOLD.format(statement="h = self.dense(h)"), "report_ctor_alone", {("0",), ("1",)}),
    # the statement would move into the other branch of the `if`: an `elif` is none
    ("bias_gelu", "    def forward(self, h, c, d):\n        h = self.dense(h)\n        if c:\n            return self.act(h)\n"
                  "        elif d:\n            return h\n        return h\n", "report_fold_elif", {()}),
    ("bias_gelu", "    def forward(self, h, c, d):\n        h = self.dense(h)\n        if c:\n            return self.act(h)\n"
                  "        else:\n            if d:\n                return h\n        return h\n", "report_fold_elif", set()),
]


@pytest.mark.parametrize("init, expected", [
    ("self.dense = torch.nn.Linear(8, 8)", {("0",), ("1",)}),
    ("self.dense = torch.nn.Linear(8, 8); self.extra = 1", {("1",)}),     # shares its line
    ("self.dense = self.proj = torch.nn.Linear(8, 8)", {("1",)}),         # two targets
])
def test_constructions_removable_alone(init, expected):
    """report_ctor_alone: the constructions whose statement can go without taking anything else."""
    rules = load_rules(["bias_gelu"], cache_dir=None)
    code = HEAD.replace("self.dense = torch.nn.Linear(8, 8)", init) + FOLD.format(statement="h = self.dense(h)")
    model = solve(facts_of(code), rules_program(rules), programs=(MAIN_PROGRAM, *MATCH_PROGRAMS),
                  parts=[LAYOUT_PART], keep={"match_node", "report_ctor_alone"})
    assert model.get("match_node"), "the rule matches the snippet"
    assert {tuple(str(a) for a in args[4:]) for args in model.get("report_ctor_alone")} == expected


@pytest.mark.parametrize("rule_id, forward, relation, expected", CASES)
def test_layout_relation(rule_id, forward, relation, expected):
    rules = load_rules([rule_id], cache_dir=None)
    model = solve(facts_of(HEAD + forward), rules_program(rules), programs=(MAIN_PROGRAM, *MATCH_PROGRAMS),
                  parts=[LAYOUT_PART], keep={"match_node", relation})
    assert model.get("match_node"), "the rule matches the snippet"
    atoms = {tuple(str(a).strip('"') for a in args[4:]) for args in model.get(relation)}
    assert atoms == expected


def test_an_if_that_reads_what_the_folded_statement_assigns_is_no_match():
    """Moving `h = self.dense(h)` into a branch would leave the test reading another `h`:
    the test is a read of the folded value outside the pattern, which checks.lp refuses."""
    forward = "    def forward(self, h):\n        h = self.dense(h)\n        if h.sum() > 0:\n            return self.act(h)\n        return h\n"
    rules = load_rules(["bias_gelu"], cache_dir=None)
    model = solve(facts_of(HEAD + forward), rules_program(rules), programs=(MAIN_PROGRAM, *MATCH_PROGRAMS),
                  keep={"cand", "match_node"})
    assert model.get("cand") and not model.get("match_node")
