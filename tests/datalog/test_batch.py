"""Several files in one clingo run (adopter/datalog/batch.py, pipeline.analyse_batch): each
file gets what it gets alone. Whether a batch is faster is measured by the benches, never here."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from conftest import misbehave_for

from adopter.datalog import batch, engine
from adopter.extract.python_facts import extract_source
from adopter.matches import pipeline
from adopter.matches.build import rules_program
from adopter.rules.registry import load_rules
from adopter.support.cache import ResultCache

SOURCES = {
    "norm.py": """import torch.nn as nn


class Output(nn.Module):
    def __init__(self, size):
        super().__init__()
        self.dense = nn.Linear(size, size)
        self.dropout = nn.Dropout(0.1)
        self.LayerNorm = nn.LayerNorm(size)

    def forward(self, hidden_states, input_tensor):
        hidden_states = self.dense(hidden_states)
        hidden_states = self.dropout(hidden_states)
        return self.LayerNorm(hidden_states + input_tensor)
""",
    "attention.py": """import torch
import torch.nn.functional as F


def eager(q, k):
    return F.softmax(q @ k.transpose(-1, -2), dim=-1)


class Attention(torch.nn.Module):
    def forward(self, q, k):
        if (n := q.shape[0]) > 1:
            q = q * n
        return eager(q, k)
""",
    "conv.py": """import torch.nn as nn


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 8, 3)
        self.bn = nn.BatchNorm2d(8)

    def forward(self, x):
        match x.dim():
            case 4:
                return self.bn(self.conv(x))
            case _:
                return x
""",
    "empty.py": "",
    "broken.py": "def f(:\n",
}


def _write(folder: Path, copies: int = 1) -> list[Path]:
    paths = []
    for copy in range(copies):
        for name, source in SOURCES.items():
            path = folder / f"{Path(name).stem}_{copy}.py"
            path.write_text(source)
            paths.append(path)
    return paths


def test_the_file_column_goes_on_relations_that_depend_on_facts_only():
    text, dependent = batch.file_column_program(
        'higher(1, "x").\n'
        'uses(E, N) :- name(E, N, "load"), higher(_I, N).\n'
        'unused(I) :- higher(I, _N), not uses(_E, _M).\n'
        'fixed(I) :- higher(I, _N).\n'
        'flag :- uses(_E, _N).\n'
        '#defined uses/2.\n')
    assert {("uses", 2), ("unused", 1), ("name", 3), ("flag", 0)} <= dependent
    assert not {("higher", 2), ("fixed", 1)} & dependent
    assert 'higher(1, "x").' in text and "fixed(I) :- higher(I, _N)." in text
    assert 'uses(Fl__,E, N) :- name(Fl__,E, N, "load"), higher(_I, N).' in text
    # a rule that reads its file only under `not` ranges over the files
    assert "unused(Fl__,I) :- file__(Fl__), higher(I, _N), not uses(Fl__,_E, _M)." in text
    assert "flag(Fl__) :- uses(Fl__,_E, _N)." in text
    assert "#defined uses/3." in text


def test_a_statement_the_file_column_does_not_cover_is_refused():
    with pytest.raises(ValueError, match="line 2: a batch program cannot hold #show uses/2."):
        batch.file_column_program('uses(E) :- name(E, _N, "load").\n#show uses/2.\n')


def test_a_batch_gives_each_file_the_relations_its_own_run_gives():
    rules_text = rules_program(load_rules())
    programs = (engine.MAIN_PROGRAM, *engine.MATCH_PROGRAMS)
    all_facts = [extract_source(source, name) for name, source in SOURCES.items() if name != "broken.py"]
    keep = pipeline.REPORTED | {"dl_node", "structure_scope", "too_many_guards"}
    parts = pipeline.forward_structure_parts(pipeline.SUMMARY_MAX_GUARDS)
    together = batch.solve(all_facts, rules_text, parts, programs, keep)
    for facts, model in zip(all_facts, together):
        alone = engine.solve(facts, rules_text, parts, programs, keep)
        assert {name: sorted(map(str, model.get(name))) for name in keep} == \
               {name: sorted(map(str, alone.get(name))) for name in keep}, facts.path
    assert sum(len(model.ids("match_node")) for model in together) > 0  # (the sources match rules)


def _request(rules) -> pipeline.Request:
    return pipeline.Request.of(rules, want_summary=True, want_facts=False, cache=ResultCache(None))


def _analysis(result) -> tuple:
    return (result.path, [str(d) for d in result.diagnostics], result.summary,
            [(m.rule, m.line, m.col) for m in result.matches or []], result.fact_count)


def test_analyse_batch_answers_each_file_as_analyse_file_does(tmp_path):
    rules = load_rules()
    request = pipeline.Request.of(rules, want_summary=True, want_facts=True, cache=ResultCache(None), render_tables=True)
    tasks = [pipeline.FileTask(path, path.stem, request) for path in _write(tmp_path)]
    alone = [pipeline.analyse_file(task) for task in tasks]
    together = pipeline.analyse_batch(tasks)
    assert [_analysis(r) for r in together] == [_analysis(r) for r in alone]
    assert [r.tables for r in together] == [r.tables for r in alone]
    by_name = {Path(r.path).name: r for r in together}
    assert {m.rule for r in together for m in r.matches or []} >= {"dropout_layernorm", "softmax", "conv_batchnorm"}
    assert by_name["broken_0.py"].failed and not by_name["norm_0.py"].failed


def test_small_files_are_batched_up_to_a_count_and_a_size(tmp_path, monkeypatch):
    monkeypatch.setattr(pipeline, "BATCH_FILES", 3)
    monkeypatch.setattr(pipeline, "BATCH_BYTES", 1000)
    monkeypatch.setattr(pipeline, "BATCH_MIN_FILES", 4)
    sizes = [100_000, 400, 400, 400, 400, 700, 300, 10]
    tasks = []
    for i, size in enumerate(sizes):
        (tmp_path / f"f{i}.py").write_text("#" * size)
        tasks.append(pipeline.FileTask(tmp_path / f"f{i}.py", f"f{i}", None))
    assert pipeline._units(tasks, solving=True) == [[0], [1, 2, 3], [4, 5], [6, 7]]
    assert pipeline._units(tasks, solving=False) == [[i] for i in range(len(sizes))]  # facts alone: no clingo
    monkeypatch.setattr(pipeline, "BATCH_MIN_FILES", 8)
    assert pipeline._units(tasks, solving=True) == [[i] for i in range(len(sizes))]  # too few small files


def test_the_files_of_a_failing_batch_are_analysed_again_each_alone(tmp_path, monkeypatch):
    monkeypatch.setattr(pipeline, "BATCH_MIN_FILES", 2)
    paths = _write(tmp_path, copies=2)
    rules = load_rules()
    expected = {Path(r.path).name: _analysis(r) for r in pipeline.run_files(paths, _request(rules), jobs=1)[0]}
    misbehave_for(monkeypatch, pipeline, "_begin", "conv_1.py", lambda: os._exit(9))  # (`analyse_batch` calls `_begin`)
    run, problems = pipeline.run_files(paths, _request(rules), jobs=2)
    results = {Path(r.path).name: r for r in run}
    assert "worker process died (exit code 9)" in results["conv_1.py"].diagnostics[0].message
    [warning] = problems
    assert warning.severity == "warning" and "batch(es) of small files failed" in warning.message
    del expected["conv_1.py"]
    assert {name: _analysis(results[name]) for name in expected} == expected


@pytest.mark.parametrize("jobs", [2])
def test_a_batched_run_finds_what_a_run_of_single_files_finds(tmp_path, monkeypatch, jobs):
    paths = _write(tmp_path, copies=4)  # 20 small files
    rules = load_rules()
    run, problems = pipeline.run_files(paths, _request(rules), jobs=jobs)
    assert problems == []  # no batch failed (its files would have been analysed again, alone)
    batched = [_analysis(r) for r in run]
    monkeypatch.setattr(pipeline, "BATCH_MIN_FILES", 10**6)
    single = [_analysis(r) for r in pipeline.run_files(paths, _request(rules), jobs=jobs)[0]]
    assert batched == single
