"""adopter/extract/axis_patterns.py: einops' axis notation lowered to rows, one row per axis;
any other text gives none."""

import pytest

from adopter.extract.axis_patterns import ALONE, axis_rows

TABLE = [
    ("... (d r) -> ... d r", [("in", -2, ALONE, "..."), ("in", -1, 0, "d"), ("in", -1, 1, "r"),
                              ("out", -3, ALONE, "..."), ("out", -2, ALONE, "d"), ("out", -1, ALONE, "r")]),
    ("... d r -> ... (d r)", [("in", -3, ALONE, "..."), ("in", -2, ALONE, "d"), ("in", -1, ALONE, "r"),
                              ("out", -2, ALONE, "..."), ("out", -1, 0, "d"), ("out", -1, 1, "r")]),
    ("b n (h d) -> b h n d", [("in", -3, ALONE, "b"), ("in", -2, ALONE, "n"), ("in", -1, 0, "h"), ("in", -1, 1, "d"),
                              ("out", -4, ALONE, "b"), ("out", -3, ALONE, "h"), ("out", -2, ALONE, "n"),
                              ("out", -1, ALONE, "d")]),
    ("... n -> ... n 1", [("in", -2, ALONE, "..."), ("in", -1, ALONE, "n"),
                          ("out", -3, ALONE, "..."), ("out", -2, ALONE, "n"), ("out", -1, ALONE, "1")]),
    ("bhid,bhjd->bhij", []),        # torch.einsum's equation: commas are not the notation
    ("b (h d -> b h d", []),        # an unclosed group
    ("b ((h) d) -> b h d", []),     # nested groups
    ("a -> b -> c", []),
    ("-> b", []),                   # an empty side
    ("x", []),
]


@pytest.mark.parametrize("text, rows", TABLE, ids=[text for text, _ in TABLE])
def test_the_notation_is_lowered_axis_by_axis_and_other_text_is_not(text, rows):
    assert axis_rows(text) == rows
