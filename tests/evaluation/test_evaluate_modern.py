"""evaluation/evaluate_modern.py: locations are counted, so a line holding two calls needs both."""

import pandas as pd

from evaluation.evaluate_modern import KEY, summary, unscored


def frame(rows):
    return pd.DataFrame(rows, columns=KEY)


def test_two_locations_on_one_line_need_two_matches():
    truth = frame([("t", "a.py", "softmax", 10), ("t", "a.py", "softmax", 10), ("t", "a.py", "softmax", 20)])
    found = frame([("t", "a.py", "softmax", 10), ("t", "a.py", "softmax", 30)])
    table, differing = summary(found, truth)
    row = table[(table["rule"] == "softmax") & (table["corpus"] == "t")].iloc[0]
    assert (row["gt"], row["tp"], row["fp"], row["fn"]) == (3, 1, 1, 2)
    assert (row["precision"], row["recall"]) == (0.5, 0.3333)
    assert sorted(differing["line"]) == [10, 20, 30]


def test_rules_are_scored_per_corpus_and_over_all():
    truth = frame([("t", "a.py", "softmax", 1), ("d", "b.py", "softmax", 1)])
    found = frame([("t", "a.py", "softmax", 1)])
    table, _ = summary(found, truth)
    by = {(r.rule, r.corpus): (r.tp, r.fn) for r in table.itertuples()}
    assert by[("softmax", "t")] == (1, 0) and by[("softmax", "d")] == (0, 1)
    assert by[("softmax", "all")] == (1, 1) and by[("total", "all")] == (1, 1)


def test_a_rule_without_ground_truth_is_set_aside_not_scored_as_false_positives():
    truth = frame([("t", "a.py", "softmax", 1)])
    found = frame([("t", "a.py", "softmax", 1), ("t", "a.py", "swiglu", 5), ("t", "b.py", "swiglu", 7)])
    scored, not_scored = unscored(found, truth)
    assert not_scored == {"swiglu": 2} and list(scored["rule"]) == ["softmax"]
    table, _ = summary(scored, truth)
    assert table[table["rule"] == "total"].iloc[0]["precision"] == 1.0
