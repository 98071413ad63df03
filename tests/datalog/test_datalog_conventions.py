"""Conventions of the Datalog programs that keep grounding fast (adopter/datalog/main.lp)."""

import re

from clingo import ast

from conftest import ROOT
from adopter.rules.compiler import compile_rule
from adopter.rules.registry import load_rules


def anonymous_in_positive_literals(text: str) -> list[str]:
    """`line: literal` for every positive body literal with an anonymous variable `_`."""
    found: list[str] = []

    class Anonymous(ast.Transformer):
        seen = False

        def visit_Variable(self, variable):
            Anonymous.seen |= variable.name == "_"
            return variable

    def check(statement) -> None:
        if statement.ast_type != ast.ASTType.Rule:
            return
        for literal in statement.body:
            if (literal.ast_type == ast.ASTType.Literal and literal.sign == ast.Sign.NoSign
                    and literal.atom.ast_type == ast.ASTType.SymbolicAtom):
                Anonymous.seen = False
                Anonymous()(literal)
                if Anonymous.seen:
                    found.append(f"{literal.location.begin.line}: {literal}")

    ast.parse_string(re.sub(r'#include "[^"]+"\.', "", text), check)  # each included file is checked on its own
    return found


def test_the_check_finds_an_anonymous_variable_only_in_positive_literals():
    found = anonymous_in_positive_literals("a(X) :- b(X, _), not c(X, _).\nd(X) :- b(X, _Y).\n")
    assert found == ["1: b(X,_)"]


def test_no_program_projects_through_an_anonymous_variable():
    offending = {}
    for path in sorted((ROOT / "adopter" / "datalog").rglob("*.lp")):
        found = anonymous_in_positive_literals(path.read_text())
        if found:
            offending[str(path.relative_to(ROOT))] = found
    for rule in load_rules():
        found = anonymous_in_positive_literals(compile_rule(rule))
        if found:
            offending[f"compiled rule {rule.id}"] = found
    assert not offending, f"name the ignored columns (`_Kind`, not `_`; adopter/datalog/main.lp says why): {offending}"
