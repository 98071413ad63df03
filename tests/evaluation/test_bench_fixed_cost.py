"""`make bench-fixed` bookkeeping (evaluation/bench/fixed_cost.py): its program sets are
cumulative and each sample is one forked ground. What a ground costs is measured by the
bench, never here."""

from __future__ import annotations

from evaluation.bench import fixed_cost


def test_the_program_sets_are_cumulative_and_end_with_the_compiled_rules():
    sets = [fixed_cost._programs(which) for which in fixed_cost.SETS]
    assert len(sets[0][0]) == 1 and sets[0][1] == ""  # main.lp alone
    assert sets[1][0][:1] == sets[0][0] and len(sets[1][0]) > 1 and sets[1][1] == ""
    assert sets[2][0] == sets[1][0] and "cand(m(" in sets[2][1]


def test_each_fork_reports_the_cpu_time_of_its_ground():
    seconds = fixed_cost.samples(fixed_cost.SETS[0], forks=2)
    assert len(seconds) == 2
    assert all(isinstance(s, float) and s > 0 for s in seconds)  # a CPU time, however long (the bench measures it)
