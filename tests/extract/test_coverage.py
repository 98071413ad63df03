"""Every statement, expression and pattern kind of the running Python has a handling in
adopter/extract/coverage.py, the same as docs/analysis-coverage.md says, and the extractor reports
every kind that table does not model."""

import ast
import re

import pytest

from conftest import ROOT, facts_of
from adopter.extract import coverage, python_facts

HANDLINGS = {coverage.MODELLED, coverage.REPORTED, coverage.ABSENT}


@pytest.mark.parametrize("what", sorted(coverage.TABLES))
def test_every_kind_of_this_python_says_how_it_is_handled(what):
    kinds = {cls.__name__ for cls in coverage.ast_classes(coverage.BASES[what])}
    missing = kinds - set(coverage.TABLES[what])
    assert not missing, f"say how the extractor handles these {what}s in adopter/extract/coverage.py: {sorted(missing)}"
    assert {handling for handling, _ in coverage.TABLES[what].values()} <= HANDLINGS


def test_only_deprecated_aliases_are_absent_and_ast_parse_never_makes_them():
    absent = {name for table in coverage.TABLES.values() for name, (h, _) in table.items() if h == coverage.ABSENT}
    assert absent == {"Num", "Str", "Bytes", "NameConstant", "Ellipsis"}
    tree = ast.parse("a = (1, 'x', b'y', None, ...)")
    assert {type(node).__name__ for node in ast.walk(tree)} & absent == set()


def test_the_coverage_page_says_what_the_table_says():
    rows = re.findall(r"^\| `(\w+)` \|.*\| (\w+) \|$", (ROOT / "docs" / "analysis-coverage.md").read_text(), re.M)
    page = dict(rows)
    assert len(page) == len(rows)  # each kind once
    table = {name: handling for t in coverage.TABLES.values() for name, (handling, _) in t.items()}
    assert page == table


def test_a_kind_the_table_does_not_model_is_reported_where_it_stands(monkeypatch):
    code = """
    async def f(x):
        assert x
        global g
        return await x
    """
    facts = facts_of(code)
    assert {(kind, line) for _, kind, line in facts.rows["unmodelled"]} == {("global", 4)}
    # as a newer Python's node would be: unlisted kinds are reported like `global`
    monkeypatch.setattr(python_facts, "MODELLED_TYPES", coverage.MODELLED_TYPES - {ast.Assert, ast.Await})
    facts = facts_of(code)
    assert {(kind, line) for _, kind, line in facts.rows["unmodelled"]} == {("assert", 3), ("global", 4), ("await", 5)}
