"""evaluation/evaluate_dev.py: families, and the locations that need other files of a project."""

import pandas as pd

from evaluation.evaluate_dev import by_family, score

COLUMNS = ["corpus", "path", "family", "line", "needs"]


def test_rules_count_for_their_family_and_project_rows_are_neither_scored_nor_false_positives():
    truth = pd.DataFrame([("c", "a.py", "attention", 10, ""), ("c", "a.py", "softmax", 12, ""),
                          ("c", "b.py", "rotary", 5, "project")], columns=COLUMNS)
    found = by_family(pd.DataFrame([("c", "a.py", "manual_attention", 10), ("c", "b.py", "rotary", 5),
                                    ("c", "a.py", "softmax", 30), ("c", "a.py", "fused_qkv", 3)],
                                   columns=["corpus", "path", "rule", "line"]))
    table, differing, ahead, other = score(found, truth)
    rows = table.set_index(["rule", "corpus"])
    assert rows.loc[("attention", "all"), "tp"] == 1                         # manual_attention is an attention
    assert (rows.loc[("softmax", "all"), "fp"], rows.loc[("softmax", "all"), "fn"]) == (1, 1)
    assert "rotary" not in set(table["rule"]) and list(ahead["line"]) == [5]  # found ahead of its analysis
    assert list(other["rule"]) == ["fused_qkv"]                              # no family the corpus was read for
    assert len(differing) == 2
