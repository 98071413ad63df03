"""evaluation/bench/rule_stats.py: the counting build's rows summed per rule and grouped."""

from __future__ import annotations

from evaluation.bench import rule_stats

LOAD = 'name(X1,X2,X3) <~ #Script0=input("name"):[] , (X1,X2,X3)=#Script0:[0] , #end:[1].'
DOTTED = 'dotted(QB,A,#Script0) <~ qname_attr(QB,A)@NEW:[] , #Script0=cat(QB,".",A):[0] , #end:[0,1].'
PLAIN = "use_def(E,D) <~ use_def_var(E,D,_Var)@ALL:[] , #end:[1]."


def test_rows_of_several_grounds_are_summed_per_rule_and_a_cut_row_is_skipped(tmp_path):
    stats = tmp_path / "rules.tsv"
    stats.write_text(f"1\t10\t500\t{LOAD}\n2\t5\t100\t{PLAIN}\n1\t30\t700\t{LOAD}\n1\t2\tdotted(QB\n3\t4\t50\t{DOTTED}\n")
    costs = rule_stats.read(stats)
    assert set(costs) == {LOAD, PLAIN, DOTTED}
    assert (costs[LOAD].calls, costs[LOAD].steps, costs[LOAD].nanoseconds) == (2, 40, 1200)
    assert (costs[PLAIN].calls, costs[PLAIN].steps, costs[PLAIN].nanoseconds) == (2, 5, 100)


def test_rules_that_call_into_python_are_grouped_by_the_functions_they_call():
    assert rule_stats.group(LOAD) == "@input"
    assert rule_stats.group(DOTTED) == "@cat"
    assert rule_stats.group("mnode(M,I,X) <~ #Script3=size(Xs):[2] , X=#Script5=nth(Xs,I):[3]") == "@nth/@size"
    assert rule_stats.group(PLAIN) == "rules"
