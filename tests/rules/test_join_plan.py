"""The join planner of compiled rules (adopter/rules/join_plan.py), on its own."""

from adopter.rules.join_plan import binding_order, chain, is_positive, literal_variables, wait_for_bindings


def test_nodes_are_bound_as_written_when_each_reads_the_one_before():
    assert binding_order([set(), {0}, {1}, {2}]) == [0, 1, 2, 3]


def test_a_consumer_is_bound_right_after_its_producers():
    # q, k, v projections of one input (no producers), then a split of each: q's split comes
    # right after q, before k is bound
    assert binding_order([set(), set(), set(), {0}, {1}, {2}]) == [0, 3, 1, 4, 2, 5]
    # a node reading two producers waits for both
    assert binding_order([set(), set(), {0, 1}]) == [0, 1, 2]


def test_a_node_whose_producer_comes_later_is_bound_in_its_place_when_nothing_is_ready():
    assert binding_order([{1}, {0}]) == [0, 1]
    assert binding_order([{2}, set(), set()]) == [1, 2, 0]


def test_a_literal_waits_for_the_step_that_binds_its_variables():
    # a comparison (step 1) and a negation (step 2) read V, which only literal 1 (step 3, positive)
    # binds: both wait for step 3; literal 3 binds W itself
    steps = wait_for_bindings([1, 3, 2, 2], [["V"], ["V"], ["V"], ["W"]], [False, True, False, True], last=4)
    assert steps == [3, 3, 3, 2]
    # the earliest positive literal binds: here the one at step 1
    assert wait_for_bindings([1, 3, 2], [["V"], ["V"], ["V"]], [True, True, False], last=4) == [1, 3, 2]
    # a binder later than the last step binds at the last step
    assert wait_for_bindings([1, 9], [["V"], ["V"]], [False, True], last=4) == [4, 9]


def test_the_literals_variables_skip_string_terms_and_positive_means_binding():
    assert literal_variables('node_type(X1, "Torch.Nn")') == ["X1"]
    assert is_positive("input_from(X2, 0, X1)") and not is_positive("not node_kind(X1, op)")
    assert not is_positive("K1 < K2") and not is_positive("X1 != X2")


def test_a_chain_carries_what_later_steps_and_the_head_read():
    body = ["rule_node_at(X1, R, K1)", "node_type(X1, \"a\")", "rule_edge(X1, 0, X2, R, K2)", "K1 < K2"]
    rules = chain('"r"', body, ["X1", "X2"], [], 'cand(m("r", R, (X1, X2,), ()))')
    assert rules == ['cand_part("r", 1, R, K1, X1) :- rule_node_at(X1, R, K1), node_type(X1, "a").',
                     'cand(m("r", R, (X1, X2,), ())) :- cand_part("r", 1, R, K1, X1), rule_edge(X1, 0, X2, R, K2), '
                     'K1 < K2.']
