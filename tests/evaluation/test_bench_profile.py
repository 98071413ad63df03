"""`make profile` bookkeeping (evaluation/bench/profile.py): its steps follow `main.lp` and
each cumulative step grounds on its own. What the steps cost is measured by the profile,
never here."""

from __future__ import annotations

import re
from pathlib import Path

from adopter.datalog.engine import MAIN_PROGRAM
from evaluation.bench import profile

FIXTURE = Path(__file__).resolve().parents[2] / "adopter" / "rules" / "paper" / "dropout_layernorm.py"


def test_the_datalog_steps_are_main_lp_in_include_order_then_the_match_programs_then_the_rules():
    includes = re.findall(r'#include "([^"]+)"', MAIN_PROGRAM.read_text())
    steps = profile.datalog_steps()
    assert [name for name, _, _ in steps[:len(includes)]] == includes
    assert [name for name, _, _ in steps[len(includes):-1]] == ["match/support.lp", "match/checks.lp", "match/report.lp", "match/layout.lp",
                                                                   "ops/canonical.lp", "ops/idioms.lp"]
    assert all(len(programs) == i + 1 for i, (_, programs, _) in enumerate(steps[:-1]))  # cumulative
    assert "cand(m(" in steps[-1][2] and steps[-1][1] == steps[-2][1]  # the rules add text, not programs


def test_every_step_runs_on_its_own_and_adds_what_its_program_defines():
    """Each cumulative step grounds alone (one that cannot raises here) and keeps what the
    steps before it derived; the last one finds the fixture's dropout+LayerNorm candidates."""
    names = profile.step_names()
    previous: dict[str, int] = {}
    for step in range(len(names)):
        atoms = profile.run_step([FIXTURE], step, count_atoms=True)
        assert all(atoms.get(name, 0) >= count for name, count in previous.items()), names[step]
        previous = atoms
    assert previous.get("dl_node", 0) > 0 and previous.get("cand", 0) > 0
