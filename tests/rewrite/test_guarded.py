"""Guarded rewrites (`fallback: eager`): the literals a match reports in `eager_when`, the
guard's text, and the patched fixture (the guard's alternatives and the decided `if`s are
match/layout.lp's: tests/datalog/test_match_layout.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import assert_golden
from adopter.records import Literal
from adopter.api.scan import scan
from adopter.rewrite.conditions import disjunction, text
from adopter.rewrite.spans import Unsafe
from adopter.rewrite.patch import patch_source
from adopter.rules.registry import load_rules

ROOT = Path(__file__).resolve().parents[2]
FIXTURE = ROOT / "adopter" / "rules" / "modern" / "manual_attention.py"
PATCHED = ROOT / "tests" / "golden" / "manual_attention.patched.py"  # run against FIXTURE by tests/kernels/test_kernels.py


def _conditions(alternatives):
    return [[(c.condition, c.holds) for c in conj] for conj in alternatives]


def test_eager_when_lists_each_outside_read_with_its_literals():
    matches = scan([str(FIXTURE)], load_rules(["manual_attention"]), jobs=1, cache_dir=None, layout=True).matches
    by_class = {m.class_: m for m in matches}
    bert = _conditions(by_class["BertLike"].eager_when)
    # the head-mask product, the relative scores and the conditional expression that returns the probabilities
    assert [("head_mask is not None", True)] in bert
    assert [("output_attentions", True)] in bert
    assert [('self.position_embedding_type == "relative_key"', True)] in bert
    assert by_class["BertLike"].path == [Literal("attention_mask is not None", True)]
    assert _conditions(by_class["ProbabilitiesReturnedWhenAsked"].eager_when) == [[("output_attentions", True)]]
    assert by_class["Plain"].eager_when == [] and by_class["Plain"].merged_reads == 0
    # the first softmax reads the scores with or without the mask: no guard tells that path apart
    assert by_class["ScoresReadAfterAnOptionalAdd"].merged_reads > 0


def test_negated_literals_keep_the_source_spelling():
    assert text(Literal("mask is not None", False)) == "mask is None"
    assert text(Literal('kind == "relative"', False)) == 'kind != "relative"'
    assert text(Literal("a or b", False)) == "not (a or b)"
    assert text(Literal("a or b", True)) == "(a or b)"
    assert disjunction([[Literal("x", True), Literal("y", False)], [Literal("z", True)], [Literal("z", True)]]) \
        == ["(x and not y)", "z"]


def test_a_condition_that_is_no_expression_is_refused():
    with pytest.raises(Unsafe, match="cannot be re-read"):
        text(Literal("match x: case 1", True))


def test_the_patched_fixture_that_test_kernels_runs_is_the_rewriters_output():
    rules = load_rules(["manual_attention"])
    matches = scan([str(FIXTURE)], rules, jobs=1, cache_dir=None, layout=True).matches
    patched = patch_source(str(FIXTURE), FIXTURE.read_text(), matches, {r.key: r for r in rules}, kernels="torch").patched
    assert_golden(patched, PATCHED)
