"""adopter/rules/symmetry.py: a pattern's interchangeable nodes, ordered once; nothing else ordered."""

from adopter.rules.dsl import parse_rule
from adopter.rules.registry import load_rules
from adopter.rules.symmetry import automorphisms, ordered_pairs


def rule(forward: str, init: str = "_"):
    return parse_rule(f"rule: t\ninit: {init} => _\nforward: {forward} => _\n", "adopter/rules/x/t.adopt")


def test_three_projections_each_split_into_heads_are_ordered_once():
    # q, k, v: any of the 3! assignments of the code's projections would be a match of its own
    (qkv,) = [r for r in load_rules(["fused_qkv"])]
    assert len(automorphisms(qkv)) == 6
    assert ordered_pairs(qkv) == [(0, 1), (0, 2), (1, 2)]  # the projections; their splits follow from them


def test_gate_and_up_play_different_roles_so_nothing_is_ordered():
    (swiglu,) = [r for r in load_rules(["swiglu"]) if not r.shape]
    assert automorphisms(swiglu) == [(0, 1, 2, 3)] and ordered_pairs(swiglu) == []


def test_operands_of_a_commutative_operator_are_interchangeable_but_not_of_others():
    assert ordered_pairs(rule("torch.exp($a) -> $x; torch.exp($a) -> $y; $x * $y -> $z")) == [(0, 1)]
    assert ordered_pairs(rule("torch.exp($a) -> $x; torch.exp($a) -> $y; $x - $y -> $z")) == []
    # different inputs are different roles
    assert ordered_pairs(rule("torch.exp($a) -> $x; torch.exp($b) -> $y; $x * $y -> $z")) == []
