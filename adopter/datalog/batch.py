"""Several small files in one clingo run: the programs with a file column.

Every clingo run converts, orders and indexes each rule of the programs again, ~25 ms
before any fact (`make bench-fixed`): for a file of a few KB that is most of its analysis.
Grounded together, k small files pay it once. The analyses are written for one file, so
`file_column_program` gives every relation that depends on the facts (the input relations
and every relation a rule derives from one) a first argument, the same variable `Fl__` in
every literal of a rule: no rule can join two files, and each file gets exactly the atoms
it gets alone (tests/datalog/test_batch.py compares them). Relations the programs state as
facts alone stay as they are.

Only small files are batched: a run slows as it holds more symbols, so large files cost
more together than apart (docs/performance.md, "Several files in one clingo run").
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from typing import Sequence

import clingo
import clingo.ast as ast

from adopter.datalog import engine
from adopter.extract.python_facts import FileFacts
from adopter.extract.schema import RELATIONS, flat_fields

FILE_VARIABLE = "Fl__"
FILE_RELATION = "file__"  # file__(F) for each file of a batch: ranges F where a rule reads its file only under `not`
Atom = tuple[str, int]


# nodes that hold no atom: the walks below do not descend into them (each step into clingo's
# AST is a call through its C API, and most of a program's nodes are terms)
_NO_ATOMS = frozenset({ast.ASTType.Comparison, ast.ASTType.Variable, ast.ASTType.SymbolicTerm,
                       ast.ASTType.UnaryOperation, ast.ASTType.BinaryOperation, ast.ASTType.Interval,
                       ast.ASTType.Function, ast.ASTType.Pool, ast.ASTType.Guard})
Site = tuple[str, int, int, int]  # an atom: name, arity, and where its name starts (line, column)
# the statements besides rules that the programs hold (a `#show p/2` or an `#external` would
# need the file column too: none is written, and `file_column_program` refuses them)
_PLAIN = frozenset({ast.ASTType.Defined, ast.ASTType.Program, ast.ASTType.Definition, ast.ASTType.Comment})


def _sites(node, found: list[Site]) -> list[Site]:
    """Every atom under an AST node (a call `@f(...)` is a term, not an atom)."""
    if isinstance(node, ast.AST):
        kind = node.ast_type
        if kind == ast.ASTType.SymbolicAtom:
            symbol = node.symbol
            if symbol.ast_type != ast.ASTType.Function:  # (`-p(X)`: no program here uses classical negation)
                raise ValueError(f"{symbol.location.begin.line}: an atom that is not a plain predicate: {symbol}")
            if not symbol.external:
                begin = symbol.location.begin
                found.append((symbol.name, len(symbol.arguments), begin.line, begin.column))
        elif kind == ast.ASTType.Literal:
            _sites(node.atom, found)
        elif kind not in _NO_ATOMS:
            for key in node.child_keys:
                _sites(getattr(node, key), found)
    elif not isinstance(node, str) and hasattr(node, "__iter__"):
        for child in node:
            _sites(child, found)
    return found


def _dependent(rules: list[tuple[list[Site], list[Site]]]) -> set[Atom]:
    """The relations that depend on a file's facts: the inputs, and the heads of the rules
    that read one (`rules`: each rule's head atoms, first the head's own, and body atoms)."""
    dependent = {(relation, len(columns)) for relation, (columns, _) in RELATIONS.items()}
    rules = [([a[:2] for a in head], [a[:2] for a in body]) for head, body in rules]
    grew = True
    while grew:
        grew = False
        for head, body in rules:
            if head and head[0] not in dependent and any(atom in dependent for atom in body + head[1:]):
                dependent.add(head[0])
                grew = True
    return dependent


def _binds_file(rule, dependent: set[Atom]) -> bool:
    """Whether a positive literal of the rule's body (not in an aggregate or a condition) reads a dependent relation."""
    for literal in rule.body:
        if literal.ast_type == ast.ASTType.Literal and literal.sign == ast.Sign.NoSign \
                and literal.atom.ast_type == ast.ASTType.SymbolicAtom:
            symbol = literal.atom.symbol
            if symbol.ast_type == ast.ASTType.Function and (symbol.name, len(symbol.arguments)) in dependent:
                return True
    return False


def file_column_program(text: str) -> tuple[str, set[Atom]]:
    """`text` (a program, its parts included) with the file column, and the relations given one.

    The edits are made in the text, at the places clingo's parser reports: rebuilding the
    statements through its AST would cost more than a small file's whole analysis."""
    statements: list = []
    ast.parse_string(text, statements.append)
    rules = {i: (_sites(s.head, []), _sites(s.body, [])) for i, s in enumerate(statements)
             if s.ast_type == ast.ASTType.Rule}
    dependent = _dependent(list(rules.values()))
    lines = [line.encode() for line in text.split("\n")]
    edits: dict[tuple[int, int], bytes] = {}  # (line, byte column, 0-based) -> bytes inserted there
    for i, statement in enumerate(statements):
        if i in rules:
            tagged = [site for site in rules[i][0] + rules[i][1] if site[:2] in dependent]
            for name, arity, line, column in tagged:
                at = column - 1 + len(name.encode())
                if arity == 0:
                    edits[(line, at)] = f"({FILE_VARIABLE})".encode()
                else:
                    at = lines[line - 1].index(b"(", at) + 1
                    edits[(line, at)] = f"{FILE_VARIABLE},".encode()
            if tagged and not _binds_file(statement, dependent):
                if not statement.body:
                    raise ValueError(f"{statement.location.begin.line}: a fact that depends on a file: {statement}")
                begin = statement.body[0].location.begin
                edits[(begin.line, begin.column - 1)] = f"{FILE_RELATION}({FILE_VARIABLE}), ".encode()
        elif statement.ast_type not in _PLAIN:
            raise ValueError(f"line {statement.location.begin.line}: a batch program cannot hold {statement}")
        elif statement.ast_type == ast.ASTType.Defined and (statement.name, statement.arity) in dependent:
            begin, end = statement.location.begin, statement.location.end
            line = lines[begin.line - 1]
            lines[begin.line - 1] = (line[:begin.column - 1] + f"#defined {statement.name}/{statement.arity + 1}.".encode()
                                     + line[end.column - 1:])
    for (line, at), inserted in sorted(edits.items(), reverse=True):  # right to left: earlier columns stay valid
        lines[line - 1] = lines[line - 1][:at] + inserted + lines[line - 1][at:]
    return "\n".join(line.decode() for line in lines), dependent


@lru_cache(maxsize=4)
def program(programs: Sequence[Path], extra_program: str) -> tuple[str, frozenset[Atom], frozenset[str]]:
    """The file-column form of `programs` (their includes inlined) and `extra_program`, the
    relations given the column, and the input relations it reads (worked out once, in the
    parent of the forks that run batches)."""
    text, dependent = file_column_program(engine.program_source(programs) + "\n#program base.\n" + extra_program)
    return text, frozenset(dependent), frozenset(engine.relations_read((), text))


def loading_rules(relations) -> str:
    """`engine.loading_rules` with the file first: each row of a batch starts with its file's index."""
    return (f'{FILE_RELATION}(F) :- (F,) = @input("{FILE_RELATION}").\n'
            + engine.loading_rules(set(relations) - {FILE_RELATION}, lead="F"))


def fact_terms(all_facts: Sequence[FileFacts], relations: set[str]) -> dict[str, str]:
    """`engine.fact_terms` of several files at once, each row led by its file's index."""
    out = {FILE_RELATION: "(" + "".join(f"({index},)," for index in range(len(all_facts))) + ")"}
    for relation in relations:
        chunks = []
        for index, facts in enumerate(all_facts):
            rows = facts.rows.get(relation)
            if rows:  # (the file's index written into the row format: one `%` for all its rows)
                row = engine.row_format(relation, f"{index},")
                chunks.append((row * len(rows)) % flat_fields(relation, rows, engine.escape_column))
        out[relation] = "(" + "".join(chunks) + ")"
    return out


def solve(all_facts: Sequence[FileFacts], extra_program: str = "",
          parts: Sequence[tuple[str, Sequence[clingo.Symbol]]] = (), programs: Sequence[Path] = (engine.MAIN_PROGRAM,),
          keep: set[str] = frozenset(), variant: str = "full") -> list[engine.Model]:
    """`engine.solve` for several files in one run: one model per file, in their order, each
    as that file's own run gives it (only the relations in `keep`)."""
    text, dependent, relations = program(tuple(programs), extra_program)
    terms = fact_terms(all_facts, relations)
    control = engine.ground((), text, parts, terms, variant, loading=loading_rules)
    models: list[dict[str, list]] = [{} for _ in all_facts]
    index_of = {engine.BACKEND.value(clingo.Number(i)): i for i in range(len(all_facts))}  # file column -> file
    for name, arity in sorted(atom for atom in dependent if atom[0] in keep):
        for row in engine.atom_rows(control, name, arity + 1):
            models[index_of[row[0]]].setdefault(name, []).append(row[1:])
    engine.keep_alive(control)
    return [engine.Model(relations) for relations in models]
