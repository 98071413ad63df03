"""evaluation/groundtruth/{modern,dev}_merge.py: a part's row that cannot be right stops the merge."""

import pandas as pd

from evaluation.groundtruth import dev_merge, modern_merge


def row(**fields):
    base = dict(corpus="c", path="p.py", scope="M", line="3", col="4", note="")
    return {**base, **fields}


def test_the_modern_sample_rows_are_checked_against_the_sample_and_the_rules():
    rows = pd.DataFrame([row(rule="softmax"), row(rule="softmax"), row(rule="nope", path="q.py", line="x")])
    sample = pd.DataFrame({"corpus": ["c"], "path": ["p.py"]})
    assert modern_merge.problems(rows, sample, {"softmax"}) == [
        "c/q.py:x: not a file of the sample", "c/q.py:x: unknown rule 'nope'", "c/q.py:x: line and col must be numbers",
        "c/p.py:3:4: softmax twice", "c/p.py:3:4: softmax twice"]


def test_the_development_rows_are_checked_for_their_family_and_what_they_need():
    rows = pd.DataFrame([row(family="softmax", spelling="", needs=""), row(family="swiglu", spelling="", needs="later")])
    assert dev_merge.problems(rows, {("c", "p.py")}) == ["c/p.py:3: needs is 'later', not one of ['', 'project']"]
    assert dev_merge.problems(rows.assign(family="softmaxx", needs=""), {("c", "p.py")})[:1] == [
        "c/p.py:3: unknown family 'softmaxx'"]
