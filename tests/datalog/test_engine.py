"""The engine: a control prepared ahead serves exactly one later solve of the same programs;
grounding with Adopter's `@functions` and reading atoms give the same answers through clingo's
C bindings and through its public API (each test of a ground runs on both)."""

import pytest

from conftest import facts_of
from adopter.datalog import clingo_native, engine
from adopter.datalog.clingo_public import PublicClingo

BACKENDS = [PublicClingo] + ([clingo_native.NativeClingo] if clingo_native.available() else [])


@pytest.fixture(params=BACKENDS, ids=lambda backend: backend.name)
def backend(request, monkeypatch):
    monkeypatch.setattr(engine, "BACKEND", request.param)
    return request.param


def test_this_clingo_has_the_c_bindings_the_engine_prefers():
    """The pinned clingo (requirements.lock) has them; another build runs on the public API."""
    assert clingo_native.available() and engine.BACKEND is clingo_native.NativeClingo

SOURCE = """
    import torch.nn as nn
    class A(nn.Module):
        def forward(self, x):
            return nn.functional.softmax(x, dim=-1)
"""
QUERY = 'out(E, Q) :- qname(E, Q).'


def _answers(model) -> list[str]:
    return sorted(str(args) for args in model.get("out"))


def test_a_prepared_control_serves_the_next_solve_of_the_same_programs_once(monkeypatch):
    monkeypatch.setattr(engine.ENGINE, "prepared", {})
    facts = facts_of(SOURCE)
    plain = _answers(engine.solve(facts, extra_program=QUERY, keep={"out"}))
    assert any("torch.nn.functional.softmax" in answer for answer in plain)
    engine.prepare((engine.MAIN_PROGRAM,), QUERY)
    loads = []
    real = engine._loaded
    monkeypatch.setattr(engine, "_loaded", lambda *args: loads.append(args) or real(*args))
    assert _answers(engine.solve(facts, extra_program=QUERY, keep={"out"})) == plain
    assert loads == []  # the prepared control was used
    assert _answers(engine.solve(facts, extra_program=QUERY, keep={"out"})) == plain
    assert len(loads) == 1  # and only once: a control grounds one file


def test_a_prepared_control_is_not_used_for_other_programs(monkeypatch):
    monkeypatch.setattr(engine.ENGINE, "prepared", {})
    engine.prepare((engine.MAIN_PROGRAM,), QUERY)
    loads = []
    real = engine._loaded
    monkeypatch.setattr(engine, "_loaded", lambda *args: loads.append(args) or real(*args))
    other = 'out(E, N) :- name(E, N, "load").'
    assert engine.solve(facts_of(SOURCE), extra_program=other, keep={"out"}).get("out")
    assert len(loads) == 1


def test_cat_joins_strings_bare_and_other_symbols_as_text(backend):
    got = engine.solve(facts_of(SOURCE), extra_program='c(@cat("torch.nn", ".", 3, f("x"))).', keep={"c"})
    assert [row[0].string for row in got.get("c")] == ['torch.nn.3f("x")']


def test_a_call_of_a_function_adopter_does_not_define_is_an_error(backend):
    with pytest.raises(NameError, match="@shell"):
        engine.solve(facts_of(SOURCE), extra_program='c(@shell("ls")).', keep={"c"})


def test_the_rows_of_every_input_relation_reach_clingo_and_a_failing_call_is_raised(backend):
    facts = facts_of(SOURCE)
    # every row of two relations, loaded through @input
    query = 'out(E, N) :- name(E, N, "load"). out(E, A) :- attribute(E, _Base, A).'
    got = sorted((e.number, n.string) for e, n in engine.solve(facts, extra_program=query, keep={"out"}).get("out"))
    rows = sorted([(e, n) for e, n, ctx in facts.rows["name"] if ctx == "load"] + [(e, a) for e, _, a in facts.rows["attribute"]])
    assert got == rows and rows
    # an exception in a function the program calls is raised by the grounding
    with pytest.raises(IndexError):
        engine.solve(facts, extra_program="out(@nth((1, 2), 5)).", keep={"out"})


def test_a_program_clingo_rejects_when_grounding_fails_each_file_not_the_preparation(monkeypatch, backend):
    monkeypatch.setattr(engine.ENGINE, "prepared", {})
    unsafe = 'out(X) :- not name(X, "x", "load").'
    engine.prepare((engine.MAIN_PROGRAM,), unsafe)  # (it grounds no part: clingo checks the rules there)
    with pytest.raises(RuntimeError, match="unsafe"):
        engine.solve(facts_of(SOURCE), extra_program=unsafe, keep={"out"})


def test_grounding_calls_cat_size_and_nth_on_clingos_symbols(backend):
    """`cat`, `size` and `nth`, for strings, numbers, terms and tuples: `cat` joins strings' own
    text and other symbols as clingo prints them, `size` counts arguments, `nth` takes one (from 0)."""
    import clingo
    args = [clingo.String("torch.nn"), clingo.String("."), clingo.Number(-3), clingo.Function("f", [clingo.String("x\"y")]),
            clingo.Function("", [clingo.Number(1), clingo.Function("a")])]
    tuple_ = clingo.Function("", [clingo.String("p"), clingo.Number(7), clingo.Function("q", [clingo.Number(1)])])
    program = (f"c(@cat({', '.join(map(str, args))})). s(@size({tuple_})). s(@size(())). "
               + " ".join(f"n({i}, @nth({tuple_}, {i}))." for i in range(3)))
    got = engine.solve(facts_of(SOURCE), extra_program=program, keep={"c", "s", "n"})
    assert got.get("c") == [(clingo.String('torch.nn.-3f("x\\"y")(1,a)'),)]
    assert sorted(got.get("s")) == sorted([(clingo.Number(3),), (clingo.Number(0),)])
    assert sorted(got.get("n")) == [(clingo.Number(i), tuple_.arguments[i]) for i in range(3)]


def test_both_backends_give_a_zoo_file_the_same_relations(zoo, monkeypatch):
    from adopter.extract.sources import facts_of_file

    facts, _ = facts_of_file(zoo / "modeling_bert.py", "transformers.models.bert.modeling_bert")
    keep = {"dl_node", "node_type", "use_def_var", "ctx"}
    answers = {}
    for backend in BACKENDS:
        monkeypatch.setattr(engine, "BACKEND", backend)
        model = engine.solve(facts, keep=keep)
        answers[backend.name] = {name: sorted(map(str, model.get(name))) for name in keep}
    assert len(answers) == 2 and answers["public"] == answers["native"] and answers["public"]["dl_node"]
