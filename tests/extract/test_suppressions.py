"""adopter/extract/suppressions.py: which lines a `# adopter: ignore` comment names, and for which
rules; only comments count (not strings), and a file that does not tokenize has none."""

import pytest

from adopter.extract.suppressions import EVERY_RULE, ignores, suppressions

TABLE = [
    ("x = f(y)  # adopter: ignore\n", {1: EVERY_RULE}),
    ("x = f(y)  # adopter: ignore[softmax]\n", {1: frozenset({"softmax"})}),
    ("x = f(y)  #adopter:ignore[ softmax , rotary ]\n", {1: frozenset({"softmax", "rotary"})}),
    ("x = f(y)  # noqa: E501  # Adopter: Ignore[swiglu]\n", {1: frozenset({"swiglu"})}),
    ("\n\nx = 1  # adopter: ignore[a]\ny = 2\n", {3: frozenset({"a"})}),
    ("s = '# adopter: ignore'\n", {}),                       # a string, not a comment
    ("x = f(y)  # adopter ignore\n", {}),                     # not the form
    ("x = (\n  1  # adopter: ignore\n)\n", {2: EVERY_RULE}),  # the line the comment is on
    ("def f(:\n  # adopter: ignore\n", {}),                   # a file that does not parse: nothing to ignore in it
]


@pytest.mark.parametrize("text, expected", TABLE, ids=[t.split("\n")[0] for t, _ in TABLE])
def test_each_ignore_comment_names_its_line_and_rules(text, expected):
    assert suppressions(text) == expected


def test_a_bare_ignore_keeps_every_rule_out_and_a_list_only_its_own():
    found = suppressions("a = 1  # adopter: ignore\nb = 2  # adopter: ignore[softmax]\n")
    assert ignores(found, 1, "rotary") and ignores(found, 2, "softmax")
    assert not ignores(found, 2, "rotary") and not ignores(found, 3, "softmax")
