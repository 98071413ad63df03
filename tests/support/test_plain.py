"""adopter/support/plain.py: records to JSON values and back, every value checked."""

import json

import pytest

from adopter.records import CtorSite, Diagnostic, Literal, Match, NodeSite
from adopter.support.plain import from_plain, to_plain

MATCH = Match(rule="r", file="f.py", line=3, end_line=4, function="forward", init_lines=[2], bindings={"$x": "h"},
              path=[Literal("a is None", True)], col=1, end_col=9, class_="C",
              nodes=[NodeSite([3, 1, 3, 9], [3, 0, 3, 9], "forward", "C", "y", False)],
              ctors=[CtorSite([2, 4, 2, 9], [2, 0, 2, 9], "__init__", "C", "d", "self.d", False, [[5, 2]])],
              eager_when=[[Literal("b", False)]], merged_reads=0)
KIND = tuple[list[Match], list[Diagnostic]]


def test_records_come_back_equal_through_json():
    value = (([MATCH], [Diagnostic("f.py", 3, None, "m", "warning")]))
    assert from_plain(KIND, json.loads(json.dumps(to_plain(value)))) == value


@pytest.mark.parametrize("spoil", [
    lambda m: m.update(line="3"),                       # a str where an int belongs
    lambda m: m.update(line=True),                      # a bool is no int
    lambda m: m.pop("col"),                             # a field missing
    lambda m: m.update(extra=1),                        # a field too many
    lambda m: m["nodes"][0].update(sequential=None),    # inside a nested record
    lambda m: m["path"].append("a is None"),            # a list item of the wrong kind
])
def test_a_value_that_does_not_fit_its_type_is_refused(spoil):
    plain = json.loads(json.dumps(to_plain(([MATCH], []))))
    spoil(plain[0][0])
    with pytest.raises(ValueError):
        from_plain(KIND, plain)
