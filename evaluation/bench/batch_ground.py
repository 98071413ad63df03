"""`python -m evaluation.bench.batch_ground`: would several files in one clingo run be cheaper?

Every file's run pays clingo's per-rule preparation again (`make bench-fixed`), so grounding
k files at once would pay it once. The analyses are written for one file, so for this
measurement the program gets a file column: `with_file_column` adds a first argument `Fl__`
to every relation that depends on the facts (the input relations, and every relation a rule
derives from one), the same variable in every literal of a rule, so no rule joins two files.
Relations the program states as facts alone (`higher_order/3`, the compiled rules' pattern
facts) stay as they are. Each input row gets its file's index.

For k files (`--corpus`, from `--start`, in name order), CPU time of:
  single   each file grounded in a fork of a parent prepared for it, as a cold run does
  batch    the k files grounded in one fork of a parent prepared with the file-column program
`--check` also compares every kept relation (the matches, the summary) file by file.
Nothing here is used by `adopter`: it measures a design before anyone builds it.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import re
import resource
import sys
from pathlib import Path
from typing import Callable

import clingo.ast as ast

from adopter.datalog import engine
from adopter.datalog.engine import MAIN_PROGRAM, MATCH_PROGRAMS, fact_terms, ground, prepare, relations_read
from adopter.extract.python_facts import FileFacts
from adopter.extract.schema import INT_COLUMNS, RELATIONS
from adopter.extract.sources import extract_text, module_name
from adopter.matches.build import REPORTED, rules_program
from adopter.matches.structures import SUMMARY_MAX_GUARDS, forward_structure_parts
from adopter.rules.registry import load_rules

FILE_VARIABLE = "Fl__"
FILE_RELATION = "file__"  # file__(I) for each file of the batch: binds the file where a rule has no other input
KEPT = REPORTED | {"dl_node", "structure_scope", "too_many_guards"}


def _atoms(node, found: list[tuple[str, int]]) -> list[tuple[str, int]]:
    """(name, arity) of every atom under an AST node (external calls `@f(...)` are terms, not atoms)."""
    if isinstance(node, ast.AST):
        if node.ast_type == ast.ASTType.SymbolicAtom and node.symbol.ast_type == ast.ASTType.Function \
                and not node.symbol.external:
            found.append((node.symbol.name, len(node.symbol.arguments)))
        for key in node.child_keys:
            _atoms(getattr(node, key), found)
    elif not isinstance(node, str) and hasattr(node, "__iter__"):
        for child in node:
            _atoms(child, found)
    return found


def _dependent(statements: list) -> set[tuple[str, int]]:
    """The relations that depend on a file's facts: the inputs, and the heads of rules that read one."""
    dependent = {(relation, len(columns)) for relation, (columns, _) in RELATIONS.items()}
    rules = [s for s in statements if s.ast_type == ast.ASTType.Rule]
    grew = True
    while grew:
        grew = False
        for rule in rules:
            head = _atoms(rule.head, [])
            if head and head[0] not in dependent and any(a in dependent for a in _atoms(rule.body, []) + head[1:]):
                dependent.add(head[0])
                grew = True
    return dependent


class _Tag(ast.Transformer):
    def __init__(self, dependent: set[tuple[str, int]]):
        self.dependent = dependent

    def visit_SymbolicAtom(self, atom):  # noqa: N802 - clingo's visitor naming
        symbol = atom.symbol
        if symbol.ast_type == ast.ASTType.Function and not symbol.external \
                and (symbol.name, len(symbol.arguments)) in self.dependent:
            return atom.update(symbol=symbol.update(arguments=[ast.Variable(symbol.location, FILE_VARIABLE),
                                                               *symbol.arguments]))
        return atom


def _binds_file(rule, dependent: set[tuple[str, int]]) -> bool:
    """Whether a positive literal of the rule's body (outside aggregates and conditions) is a dependent relation."""
    for literal in rule.body:
        if literal.ast_type == ast.ASTType.Literal and literal.sign == ast.Sign.NoSign \
                and literal.atom.ast_type == ast.ASTType.SymbolicAtom:
            symbol = literal.atom.symbol
            if symbol.ast_type == ast.ASTType.Function and (symbol.name, len(symbol.arguments)) in dependent:
                return True
    return False


def with_file_column(text: str) -> tuple[str, set[tuple[str, int]]]:
    """The program `text` with a file column on every dependent relation, and those relations."""
    statements: list = []
    ast.parse_string(text, statements.append)
    dependent = _dependent(statements)
    tag = _Tag(dependent)
    out = []
    for statement in statements:
        if statement.ast_type == ast.ASTType.Rule and _atoms(statement, []) and \
                any(a in dependent for a in _atoms(statement, [])):
            tagged = tag(statement)
            if not _binds_file(statement, dependent):
                where = statement.location
                binder = ast.Literal(where, ast.Sign.NoSign, ast.SymbolicAtom(
                    ast.Function(where, FILE_RELATION, [ast.Variable(where, FILE_VARIABLE)], 0)))
                tagged = tagged.update(body=[binder, *tagged.body])
            out.append(str(tagged))
        elif statement.ast_type == ast.ASTType.Defined and (statement.name, statement.arity) in dependent:
            out.append(f"#defined {statement.name}/{statement.arity + 1}.")
        else:
            out.append(str(statement))
    return "\n".join(out), dependent


def _batch_loading_rules(files: int) -> Callable[[set[str]], str]:
    def rules(relations) -> str:
        out = [f"{FILE_RELATION}(0..{files - 1})."]
        for relation in sorted(relations):
            xs = ",".join(f"X{i}" for i in range(1, len(RELATIONS[relation][0]) + 1))
            out.append(f'{relation}({FILE_VARIABLE},{xs}) :- ({FILE_VARIABLE},{xs}) = @input("{relation}").')
        return "\n".join(out)
    return rules


def batch_terms(all_facts: list[FileFacts], relations: set[str]) -> dict[str, str]:
    """Each relation's rows of all files as one clingo tuple, each row led by its file's index."""
    out = {}
    for relation in relations:
        row = "(%d," + ",".join("%s" if c in INT_COLUMNS else '"%s"' for c in RELATIONS[relation][0]) + "),"
        out[relation] = "(" + "".join(row % (index, *(engine._escape(v) if isinstance(v, str) else v for v in values))
                                      for index, facts in enumerate(all_facts)
                                      for values in facts.rows.get(relation, [])) + ")"
    return out


def _kept(control, tagged: bool) -> dict[str, list[str]]:
    """The kept atoms as text, by file index (all under "0" when not `tagged`)."""
    out: dict[str, list[str]] = {}
    for name, arity, _positive in control.symbolic_atoms.signatures:
        if name in KEPT:
            for atom in control.symbolic_atoms.by_signature(name, arity):
                arguments = atom.symbol.arguments
                file = str(arguments[0].number) if tagged else "0"
                shown = arguments[1:] if tagged else arguments
                out.setdefault(file, []).append(f"{name}({','.join(map(str, shown))})")
    return {file: sorted(atoms) for file, atoms in out.items()}


def _grounded(control, tagged: bool, check: bool) -> dict[str, list[str]] | None:
    """After a ground: its kept atoms when checking (reading them is not timed apart), else nothing."""
    return _kept(control, tagged) if check else None


def _in_fork(work: Callable[[], object]) -> tuple[float, object]:
    """CPU seconds of `work()` in a fork of this process (as a cold run's worker), and its JSON-ready result."""
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(read)
        gc.disable()
        engine.retain_controls()
        before = resource.getrusage(resource.RUSAGE_SELF)
        result = work()
        after = resource.getrusage(resource.RUSAGE_SELF)
        cpu = after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
        os.write(write, json.dumps([cpu, result]).encode())
        os._exit(0)
    os.close(write)
    with os.fdopen(read) as handle:
        cpu, result = json.loads(handle.read())
    os.waitpid(pid, 0)
    return cpu, result


def measure(files: list[Path], check: bool) -> dict:
    programs = (MAIN_PROGRAM, *MATCH_PROGRAMS)
    rules_text = rules_program(load_rules())
    parts = forward_structure_parts(SUMMARY_MAX_GUARDS)
    all_facts = [extract_text(f.read_text(), f, module_name(f))[0] for f in files]
    single_cpu, single = 0.0, {}
    for index, facts in enumerate(all_facts):
        terms = fact_terms(facts, relations_read(programs, rules_text))
        prepare(programs, rules_text)
        cpu, kept = _in_fork(lambda: _grounded(ground(programs, rules_text, parts, terms), False, check))
        single_cpu += cpu
        single[str(index)] = (kept or {}).get("0", [])
    # the same programs as one text, with the file column (the includes inlined by _program_text)
    text = "\n".join(re.sub(r'#include "[^"]+"\.', "", engine._program_text(p)) for p in programs)
    batch_text, _ = with_file_column(text + "\n#program base.\n" + rules_text)
    loading = engine.loading_rules
    engine.loading_rules = _batch_loading_rules(len(all_facts))
    try:
        terms = batch_terms(all_facts, relations_read((), batch_text))
        prepare((), batch_text)
        batch_cpu, batch = _in_fork(lambda: _grounded(ground((), batch_text, parts, terms), True, check))
    finally:
        engine.loading_rules = loading
    result = {"files": len(files), "single_ms": 1000 * single_cpu, "batch_ms": 1000 * batch_cpu,
              "ratio": batch_cpu / single_cpu}
    if check:
        result["differing_files"] = [files[int(i)].name for i in single if single[i] != (batch or {}).get(i, [])]
        result["atoms_compared"] = sum(len(atoms) for atoms in single.values())
    return result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", type=Path, default=Path("hf_models"))
    parser.add_argument("--start", type=int, default=0, help="index of the first file, in name order")
    parser.add_argument("-k", type=int, default=8, help="files in the batch")
    parser.add_argument("--check", action="store_true", help="also compare the kept relations file by file")
    args = parser.parse_args(argv)
    files = sorted(args.corpus.rglob("*.py"))[args.start:args.start + args.k]
    if not files:
        parser.error(f"no Python files in {args.corpus} from index {args.start}")
    print(json.dumps(measure(files, args.check)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
