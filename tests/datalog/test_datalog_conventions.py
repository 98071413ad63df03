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


def written_programs_failing(check) -> dict[str, list[str]]:
    """What `check` finds in each written program (`adopter/datalog/**/*.lp`), by path."""
    found = {str(path.relative_to(ROOT)): check(path.read_text())
             for path in sorted((ROOT / "adopter" / "datalog").rglob("*.lp"))}
    return {path: lines for path, lines in found.items() if lines}


def programs_failing(check) -> dict[str, list[str]]:
    """What `check` finds in each written program and in each bundled rule's compiled program."""
    found = written_programs_failing(check)
    for rule in load_rules():
        if lines := check(compile_rule(rule)):
            found[f"compiled rule {rule.id}"] = lines
    return found


def test_no_program_projects_through_an_anonymous_variable():
    offending = programs_failing(anonymous_in_positive_literals)
    assert not offending, f"name the ignored columns (`_Kind`, not `_`; adopter/datalog/main.lp says why): {offending}"


def singleton_variables(text: str) -> list[str]:
    """`line: Name` for every variable named without a leading `_` that a rule mentions once:
    a name that binds nothing and tests nothing is a typo or a leftover (a rule once asked
    `live(J, V)` with `J` no longer bound: any J, a weaker test than meant)."""
    found: list[str] = []

    class Names(ast.Transformer):
        def __init__(self):
            self.count: dict[str, int] = {}

        def visit_Variable(self, variable):
            self.count[variable.name] = self.count.get(variable.name, 0) + 1
            return variable

    def check(statement) -> None:
        if statement.ast_type != ast.ASTType.Rule:
            return
        names = Names()
        names(statement)
        found.extend(f"{statement.location.begin.line}: {name}" for name, n in names.count.items()
                     if n == 1 and not name.startswith("_"))

    ast.parse_string(re.sub(r'#include "[^"]+"\.', "", text), check)
    return found


def test_the_check_finds_a_variable_a_rule_names_once():
    assert singleton_variables("a(X) :- b(X, Y), c(J).\nd(X) :- b(X, _Y).\n") == ["1: Y", "1: J"]


def test_no_written_rule_names_a_variable_once():
    # (the compiler's rules name every node's object and key whether the rule reads them or
    # not: generated, not written, and checked by the fixtures' annotations)
    offending = written_programs_failing(singleton_variables)
    assert not offending, f"a variable a rule names once binds nothing: name it `_Like_this` or use it: {offending}"


def _variables(node) -> set[str]:
    names: set[str] = set()

    class Names(ast.Transformer):
        def visit_Variable(self, variable):
            names.add(variable.name)
            return variable

    Names()(node)
    return names


def split_joins(text: str) -> list[str]:
    """`line: V = f(...)` for every equation that takes apart a variable V of a positive body
    literal while another positive literal, without V, shares a variable of `f(...)` with it:
    written so, the two literals are joined only through the equation, and clingo may ground
    the other literal first and scan every row of V's relation for each of its rows (a
    scope's literals joined so with every `scope_parent/2` row grew with the square of a
    long method's exits). Writing `f(...)` into V's column joins them on it."""
    found: list[str] = []

    def check(statement) -> None:
        if statement.ast_type != ast.ASTType.Rule:
            return
        positive = [literal for literal in statement.body if literal.ast_type == ast.ASTType.Literal
                    and literal.sign == ast.Sign.NoSign and literal.atom.ast_type == ast.ASTType.SymbolicAtom]
        for literal in statement.body:
            if literal.ast_type != ast.ASTType.Literal or literal.atom.ast_type != ast.ASTType.Comparison:
                continue
            left, guards = literal.atom.term, literal.atom.guards
            if (left.ast_type != ast.ASTType.Variable or len(guards) != 1 or guards[0].comparison != ast.ComparisonOperator.Equal
                    or guards[0].term.ast_type != ast.ASTType.Function):
                continue
            inside = _variables(guards[0].term)
            holding = [p for p in positive if left.name in _variables(p)]
            others = [p for p in positive if left.name not in _variables(p)]
            if holding and any(inside & _variables(p) for p in others):
                found.append(f"{literal.location.begin.line}: {literal}")

    ast.parse_string(re.sub(r'#include "[^"]+"\.', "", text), check)
    return found


def test_the_check_finds_a_join_made_only_through_an_equation():
    found = split_joins("a(A) :- b(_C, A), A = e(_K, L), c(L).\n"       # joined through the equation
                        "a(e(K, L)) :- b(_C, e(K, L)), c(L).\n"         # joined on the column
                        "d(E) :- r(R, E), s(R), E = e(_K, _L).\n"       # the equation only tests
                        "f(M) :- g(N, R), M = m(N, R).\n")             # builds a head term
    assert found == ["1: A = e(_K,L)"]


def test_no_rule_joins_through_an_equation():
    offending = programs_failing(split_joins)
    assert not offending, f"write the term into the column that binds the variable: {offending}"


def unmarked_join_notes(text: str) -> list[str]:
    """`line: comment` for each comment paragraph above a rule that explains a join order (it names
    clingo and a join) without the `% join:` marker, and for each marker followed by no rule."""
    lines = text.splitlines()
    found: list[str] = []
    start = None
    for i, line in enumerate([*lines, ""]):
        if line.startswith("%") and not line.startswith("%*!") and start is None:
            start = i
        if start is not None and (not line.startswith("%") or line.startswith("% join:") and i > start):
            block = " ".join(lines[start:i])
            if "clingo" in block and "join" in block and ":-" in line and not lines[start].startswith("% join:"):
                found.append(f"{start + 1}: {lines[start]}")
            if lines[start].startswith("% join:") and ":-" not in line:
                found.append(f"{start + 1}: a `% join:` note above no rule")
            start = i if line.startswith("% join:") else None
    return found


def test_the_join_note_check_finds_an_unmarked_note_and_a_marker_above_no_rule():
    assert unmarked_join_notes("% (joined on the full key: clingo met every pair)\na(X) :- b(X).\n") == [
        "1: % (joined on the full key: clingo met every pair)"]
    assert unmarked_join_notes("% join: on the full key, clingo met every pair\n\na(X) :- b(X).\n") == [
        "1: a `% join:` note above no rule"]
    assert unmarked_join_notes("% join: on the full key, clingo met every pair\na(X) :- b(X).\n") == []


def test_every_helper_relation_kept_for_a_join_order_says_so_with_a_join_note():
    # (main.lp's conventions: a relation that exists so that clingo joins on a full key is marked
    # `% join:` above its rule, so that a reader does not fold it back into its caller)
    offending = written_programs_failing(unmarked_join_notes)
    assert not offending, f"mark the note `% join: ...` directly above the rule it explains: {offending}"
