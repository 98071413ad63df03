"""The ablations fill the analyses' slots (adopter/datalog/engine.py's SLOTS): every variant
grounds the same files with clingo's warnings on, and no atom is read that no rule defines."""

import clingo
import pytest
from conftest import ROOT, facts_of

from adopter.datalog import engine
from adopter.datalog.engine import MAIN_PROGRAM, MATCH_PROGRAMS, QUERY_PROGRAMS, VARIANTS, analysis_parts
from adopter.extract.python_facts import extract_source
from adopter.matches.build import rules_program
from adopter.matches.structures import forward_structure_parts
from adopter.rules.registry import load_rules

# a file with every construct part (walrus, match, global; the lent construction added below) and the zoo's kinds of code
STATEMENTS = ROOT / "tests" / "fixtures" / "dropout_layernorm_statements.py"


def _warnings(variant: str, source: str, path: str, programs=(MAIN_PROGRAM, *MATCH_PROGRAMS)) -> list[str]:
    facts = extract_source(source, path)
    # (a construction another file of the project lends: adopter/matches/project.py)
    facts.rows["import_attr"] = [(-1, "pkg.layers.Block", "norm", "torch.nn.LayerNorm")]
    facts.rows["used_elsewhere"] = [("pkg.layers.helper",)]
    text = rules_program(load_rules(cache_dir=None)) if MATCH_PROGRAMS[0] in programs else ""
    terms = engine.fact_terms(facts, engine.relations_read(programs, text))
    # (every construct part these programs read is grounded: the file has each construct)
    assert all(terms[relation] != "()" for relation in engine.CONSTRUCT_PARTS.values() if relation in terms)
    messages: list[str] = []
    engine.ground(programs, text, forward_structure_parts(6), terms, variant, warnings=messages)
    return messages


@pytest.mark.parametrize("variant", ["full", *VARIANTS])
def test_every_variant_grounds_without_an_undefined_atom(variant):
    messages = _warnings(variant, STATEMENTS.read_text(), str(STATEMENTS))
    assert [m for m in messages if m.startswith("AtomUndefined")] == []


@pytest.mark.parametrize("variant", ["full", *VARIANTS])
def test_the_query_add_on_grounds_without_an_undefined_atom(variant):
    messages = _warnings(variant, STATEMENTS.read_text(), str(STATEMENTS), (MAIN_PROGRAM, *QUERY_PROGRAMS))
    assert [m for m in messages if m.startswith("AtomUndefined")] == []


def test_an_atom_no_rule_defines_is_reported():
    # the check above can fail: an atom read but defined nowhere is a warning clingo gives
    control_messages: list[str] = []
    control = clingo.Control(logger=lambda code, message: control_messages.append(code.name))
    control.add("base", [], "a :- b.")
    control.ground([("base", [])])
    assert control_messages == ["AtomUndefined"]


@pytest.mark.parametrize("variant", VARIANTS)
def test_a_variant_changes_only_its_slot(variant):
    code = """
    import torch.nn as nn
    class M(nn.Module):
        def helper(self, x):
            return self.norm(x)
        def forward(self, x, a):
            y = self.drop(x)
            if a:
                y = self.helper(y)
            return y
    """
    full, ablated = analysis_parts("full"), analysis_parts(variant)
    assert len(full) == len(ablated) and sum(f != a for f, a in zip(full, ablated)) == 1
    assert (variant, []) in ablated
    engine.solve(facts_of(code), variant=variant)  # grounds


def test_an_unknown_variant_is_refused():
    with pytest.raises(ValueError, match="unknown analysis variant"):
        analysis_parts("no_such_thing")
