"""End to end on real zoo files: the examples the foundation issue names."""

import pandas as pd

import pytest

from adopter.extract.tables import read_tables, write_tables
from adopter.api.query import run_query
from adopter.extract.sources import facts_of_file
from adopter.matches.structures import model_structures
from evaluation.zoo import zoo_module_name


def structures(zoo, model: str, class_name: str) -> list[str]:
    facts, problem = facts_of_file(zoo / f"modeling_{model}.py", zoo_module_name(f"modeling_{model}.py"))
    assert problem is None
    return [s.render() for s in model_structures(facts, class_name)]


def test_bert_self_output_structure(zoo):
    assert structures(zoo, "bert", "BertSelfOutput") == [
        "torch.nn.Linear(hidden_states) -> hidden_states; torch.nn.Dropout(hidden_states) -> hidden_states; "
        "hidden_states + input_tensor -> t1; torch.nn.LayerNorm(t1) -> hidden_states"]


def test_dpt_pre_act_residual_layer_has_exactly_two_structures(zoo):
    found = structures(zoo, "dpt", "DPTPreActResidualLayer")
    assert len(found) == 2
    assert [s.count("torch.nn.BatchNorm2d") for s in found] == [0, 2]
    assert all(s.count("torch.nn.Conv2d") == 2 for s in found)


def test_softmax_aliases_in_the_zoo_resolve_to_one_name(zoo, tmp_path):
    # three files spelling softmax three ways: nn.functional / F / torch.nn.functional
    files = [zoo / "modeling_bert.py", zoo / "modeling_bloom.py", zoo / "modeling_cvt.py"]
    for file, spelling in zip(files, [" nn.functional.softmax(", " F.softmax(", " torch.nn.functional.softmax("]):
        assert spelling in file.read_text()
    facts = [facts_of_file(f)[0] for f in files]
    write_tables(facts, tmp_path)
    frame = run_query(read_tables(tmp_path), 'node_type(X, "torch.nn.functional.softmax")')
    per_file = frame.groupby("file").size()
    assert set(per_file.index) == {str(f) for f in files}


def test_helper_nodes_show_inside_the_callers_structure(zoo):
    # BertSelfAttention.forward calls self.transpose_for_scores(...), which views and permutes
    first = structures(zoo, "bert", "BertSelfAttention")[0]
    assert "torch.nn.Linear(hidden_states) -> mixed_query_layer" in first
    assert "torch.Tensor.permute(x, 0, 2, 1, 3) -> key_layer" in first
    assert "torch.nn.functional.softmax(attention_scores, dim=-1) -> attention_probs" in first


def test_fact_tables_round_trip_through_pandas(zoo, tmp_path):
    facts, _ = facts_of_file(zoo / "modeling_bert.py", zoo_module_name("modeling_bert.py"))
    write_tables([facts], tmp_path)
    frame = pd.read_csv(tmp_path / "call.tsv", sep="\t")
    assert list(frame.columns) == ["file", "expr", "callee"] and len(frame) == len(facts.rows["call"])
    (back,) = read_tables(tmp_path)
    assert back.rows == facts.rows


NODE_RELATIONS = ("dl_node", "node_type", "node_kind", "node_input", "node_layer", "obj_type")


@pytest.mark.parametrize("model", ["bert", "gpt2", "t5", "dpt", "bloom", "llama", "reformer"])
def test_the_analyses_see_the_same_nodes_whatever_rules_are_loaded(zoo, model):
    """`adopter structures` (no rules), a scan with every bundled rule and a scan with one rule
    ground the same DL nodes, types and inputs: no analysis depends on which rules are loaded
    (the catalogue, not the rules, says which calls are layers and how keywords map to inputs)."""
    from adopter.datalog.engine import MAIN_PROGRAM, MATCH_PROGRAMS, solve
    from adopter.extract.sources import facts_of_file
    from adopter.matches.build import rules_program
    from adopter.rules.registry import load_rules

    facts, _ = facts_of_file(zoo / f"modeling_{model}.py", zoo_module_name(f"modeling_{model}.py"))

    def nodes(rules) -> dict[str, list[str]]:
        programs = (MAIN_PROGRAM, *MATCH_PROGRAMS) if rules is not None else (MAIN_PROGRAM,)
        model_ = solve(facts, extra_program=rules_program(rules) if rules else "", programs=programs,
                       keep=set(NODE_RELATIONS))
        return {name: sorted(map(str, model_.get(name))) for name in NODE_RELATIONS}

    alone = nodes(None)
    assert alone["dl_node"] and alone["node_input"]
    assert nodes(load_rules(cache_dir=None)) == alone
    assert nodes(load_rules(["softmax"], cache_dir=None)) == alone
