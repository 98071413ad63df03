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
from adopter.kernels import sdpa_attention
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
     "report_fallback_call", {("adopter.kernels.sdpa_attention",)}),
    # a guard condition's name assigned in the function, at the line it is assigned
    ("manual_attention", "    def forward(self, q, k, v, d, mask, o):\n" + ATTENTION
     + "        if o:\n            print(probs)\n        o = None\n        return out\n",
     "report_condition_def", {("o", "o", "20")}),
    ("manual_attention", "    def forward(self, q, k, v, d, mask, o):\n" + ATTENTION
     + "        if self.training and o:\n            print(probs)\n        self.training = 1\n        return out\n",
     "report_condition_def", {("self.training and o", "self.training", "20")}),
    # the kept range: first and last statement holding a matched one (line, col), in the
    # innermost block holding them all, and the literals of the `if`s passed on the way
    ("manual_attention", "    def forward(self, q, k, v, d, mask):\n" + ATTENTION + "        return out\n",
     "report_guard_range", {("12", "8", "17", "8")}),
    ("manual_attention", "    def forward(self, q, k, v, d, mask):\n" + ATTENTION + "        return out\n",
     "report_guard_required", set()),
    ("manual_attention", GUARDED_ADD.format(test="if not c:"), "report_guard_range", {("12", "8", "18", "8")}),
    ("manual_attention", GUARDED_ADD.format(test="if not c:"), "report_guard_required", {("c", "neg")}),
    ("manual_attention", GUARDED_ADD.format(test="if self.training and c:"), "report_guard_required",
     {("self.training and c", "pos")}),
    # the whole attention inside an `if`: that `if`'s body is the block, nothing is required
    ("manual_attention", "    def forward(self, q, k, v, d, mask, c):\n        out = q\n        if c:\n" + _indent(ATTENTION)
     + "        return out\n", "report_guard_range", {("14", "12", "19", "12")}),
    # an `elif` branch is no statement of a block: no block holds all the folded statements
    ("manual_attention", GUARDED_ADD.format(test="if c:\n            pass\n        elif mask is not None:"),
     "report_guard_range", set()),
]


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
