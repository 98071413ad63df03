"""The evaluation suite: metrics, the CI gate, ablation variants, the report."""

import pandas as pd

from adopter.api.scan import scan
from evaluation.evaluate import GROUNDTRUTH
from evaluation.gate import FLOOR, regressions
from evaluation.groundtruth.merge_parts import RULE_ORDER
from evaluation.metrics import load_groundtruth, location_summary, matches_frame
from adopter.rules.registry import load_rules
from evaluation.zoo import zoo_modules


def summary(rows):
    return pd.DataFrame(rows, columns=["rule", "gt", "tp", "fp", "fn", "precision", "recall"])


def test_gate_reports_each_rule_and_metric_below_its_floor():
    floor = pd.DataFrame({"rule": ["softmax", "fused_qkv", "conv_batchnorm"], "precision": [1.0, 1.0, 1.0],
                          "recall": [0.99, 1.0, 1.0]})
    measured = summary([("softmax", 10, 9, 0, 1, 1.0, 0.9), ("fused_qkv", 4, 4, 1, 0, 0.8, 1.0)])
    assert regressions(measured, floor) == ["softmax: recall 0.9000 < floor 0.9900",
                                            "fused_qkv: precision 0.8000 < floor 1.0000",
                                            "conv_batchnorm: missing from the evaluation"]
    assert regressions(summary([("softmax", 1, 1, 0, 0, 1.0, 1.0)]), floor.iloc[:1]) == []


def test_a_summary_per_corpus_is_gated_on_its_rows_over_all_corpora():
    floor = pd.DataFrame({"rule": ["softmax"], "precision": [1.0], "recall": [0.9]})
    measured = pd.DataFrame([("softmax", "timm-1.0.31", 1.0, 0.5), ("softmax", "all", 1.0, 0.95)],
                            columns=["rule", "corpus", "precision", "recall"])
    assert regressions(measured, floor) == []
    measured.loc[1, "recall"] = 0.8
    assert regressions(measured, floor) == ["softmax: recall 0.8000 < floor 0.9000"]


def test_the_committed_floor_names_every_rule_and_the_total():
    floor = pd.read_csv(FLOOR, sep="\t")
    assert list(floor["rule"]) == RULE_ORDER + ["total"]
    assert ((floor[["precision", "recall"]] > 0) & (floor[["precision", "recall"]] <= 1)).all().all()


SAMPLE = ["bert", "gpt2", "dpt", "reformer"]  # reformer: two guard conflicts, one reassigned name


def sample_summary(zoo, variant):
    files = [zoo / f"modeling_{m}.py" for m in SAMPLE]
    result = scan([str(f) for f in files], load_rules(), jobs=1, cache_dir=None, variant=variant,
                  modules=zoo_modules(files))
    truth = load_groundtruth(GROUNDTRUTH)
    rows, _ = location_summary(matches_frame(result.matches), truth[truth["model"].isin(SAMPLE)], RULE_ORDER)
    return rows


def test_breaking_alias_resolution_on_purpose_trips_the_gate(zoo):
    floor = pd.read_csv(FLOOR, sep="\t")
    assert regressions(sample_summary(zoo, "full"), floor) == []
    broken = regressions(sample_summary(zoo, "no_alias_resolution"), floor)
    assert "softmax: recall 0.0000 < floor 0.9950" in broken and len(broken) >= 5


def test_every_ablation_variant_runs_and_loses_what_it_takes_away(zoo):
    """Each variant changes the sample's totals the way the analysis it removes predicts:
    without feasibility, two fused_qkv candidates in reformer's LocalSelfAttention whose
    nodes need contradictory guards match (2 false positives); without inlining, GPT-2's
    softmaxes in its `_attn` helpers and dpt's and reformer's q/k/v head splits in their
    helpers are out of reach (4 misses); flow by name equality takes a reassigned name for a
    value (reformer's bias_gelu, 1 false positive) and loses reformer's q/k/v, whose names
    are assigned in both branches of an `if` (1 miss); the full analysis has none of these."""
    def totals(variant):
        rows = sample_summary(zoo, variant)
        return tuple(rows.loc[rows.rule == "total", ["tp", "fp", "fn"]].iloc[0])

    assert totals("full") == (20, 0, 0)
    assert totals("no_feasibility") == (20, 2, 0)
    assert totals("no_inlining") == (16, 0, 4)
    assert totals("name_equality_flow") == (19, 1, 1)
