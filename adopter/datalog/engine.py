"""Run the clingo analyses over the facts of one file and read back relations.

Files are analysed independently (every analysis is intra-file), so each gets its own
`clingo.Control`: memory stays bounded and files can run in parallel.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Callable, Iterable, Sequence

import clingo

from adopter import catalogue
from adopter.datalog import clingo_native
from adopter.datalog.clingo_public import PublicClingo

from adopter.extract.python_facts import FileFacts
from adopter.extract.schema import INT_COLUMNS, RELATIONS, flat_fields

DATALOG_DIR = Path(__file__).resolve().parent
MAIN_PROGRAM = DATALOG_DIR / "main.lp"
# The analyses an ablation can take away: each is a `#program` part of main.lp's files (a
# slot), which an ablation replaces with its own part (variants/<variant>.lp, a few lines).
SLOTS = {"flow": "reaching_definitions", "aliases": "alias_resolution", "inlining": "helper_contexts",
         "feasibility": "path_feasibility"}
VARIANTS = {"no_feasibility": "feasibility", "no_inlining": "inlining", "name_equality_flow": "flow",
            "no_alias_resolution": "aliases"}  # variant -> the slot it fills


def analysis_parts(variant: str = "full") -> list[tuple[str, list[clingo.Symbol]]]:
    """The parts to ground for the full analysis, or for an ablation of one of its slots."""
    if variant != "full" and variant not in VARIANTS:
        raise ValueError(f"unknown analysis variant {variant!r} (known: full, {', '.join(VARIANTS)})")
    replaced = VARIANTS.get(variant)
    return [(variant if slot == replaced else part, []) for slot, part in SLOTS.items()]


MATCH_PROGRAMS = (*(DATALOG_DIR / "match" / name for name in ("support.lp", "checks.lp", "report.lp", "layout.lp")),
                  DATALOG_DIR / "ops" / "canonical.lp", DATALOG_DIR / "ops" / "idioms.lp")
QUERY_PROGRAMS = (DATALOG_DIR / "addons" / "queries.lp",)  # relations only queries read


# How a control is grounded and its atoms read: through clingo's C bindings where this clingo
# has them (adopter/datalog/clingo_native.py), else its public API; the same atoms either way.
BACKEND = clingo_native.NativeClingo if clingo_native.available() else PublicClingo


def row_format(relation: str, lead: str = "") -> str:
    """A `%` format for one row as a clingo tuple: integer columns bare, text columns quoted,
    after `lead` (fields given as text, each with its comma: adopter/datalog/batch.py's file)."""
    cols = ",".join("%s" if c in INT_COLUMNS else '"%s"' for c in RELATIONS[relation][0])
    return f"({lead}{cols},)," if len(RELATIONS[relation][0]) == 1 and not lead else f"({lead}{cols}),"


_FORMATS = {relation: row_format(relation) for relation in RELATIONS}


def _escape(text: str) -> str:
    """`text` in clingo's string syntax (without the quotes)."""
    return text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


def escape_column(texts: list[str]) -> list[str]:
    """The texts escaped, all in one: `str.replace` scans in C, while `str.translate` would
    look every character up in a dict, a large part of rendering a file's facts as terms."""
    escaped = _escape("\0".join(texts)).split("\0")
    return escaped if len(escaped) == len(texts) else [_escape(text) for text in texts]  # a text held "\0"


def loading_rules(relations: Iterable[str], lead: str = "") -> str:
    """One rule per input relation that takes all its rows from `@input` at once (with
    `lead`, a variable each row starts with, the relation's first argument).

    Why not one fact statement per row: clingo parses and prepares every statement on its
    own, before the row's terms, while one rule instantiated over a list of tuples parsed
    by `clingo.parse_term` costs less per row in all (and rows are most of what a file
    gives clingo).
    """
    out = []
    for relation in sorted(relations):
        arity = len(RELATIONS[relation][0])
        xs = ",".join([lead] * bool(lead) + [f"X{i}" for i in range(1, arity + 1)])
        out.append(f'{relation}({xs}) :- ({xs}{"," if arity == 1 and not lead else ""}) = @input("{relation}").')
    return "\n".join(out)


_WORD = re.compile(r"\b([a-z_][a-z0-9_]*)\s*\(")


@lru_cache(maxsize=64)
def _program_text(path: Path) -> str:
    text = path.read_text()
    for include in re.findall(r'#include "([^"]+)"', text):
        text += _program_text((path.parent / include).resolve())
    return text


def program_source(programs: Sequence[Path]) -> str:
    """The text of `programs`, each with its includes inlined (`_program_text` appends them)
    and the `#include` directives dropped, and the catalogue's facts where the analyses are
    among them: one text that clingo's parser reads alone."""
    text = "\n".join(re.sub(r'#include "[^"]+"\.', "", _program_text(program)) for program in programs)
    return text + "\n#program base.\n" + catalogue_facts() if MAIN_PROGRAM in programs else text


@lru_cache(maxsize=1)
def catalogue_facts() -> str:
    """What the analyses read of the catalogue (adopter/catalogue/), as facts:
    `input_keyword(Type, Keyword, Position)`: a call of Type may pass its input Position by
    Keyword (`F.softmax(input=x)`); `input_default(Type, Keyword, Repr)`: a call of Type that
    leaves Keyword out passes the literal Repr (`F.normalize(x)`: p is "2.0"); `ctor_keyword(Class,
    Keyword, Position)`: a module class's constructor takes Keyword at Position; `library_module(Type)`: Type is a module class (a layer
    when an object of it is called); `op_spelling(Op, Type, Form)`: a call of Type, written in
    Form (function, method, module), computes the canonical operation Op (`torch.Tensor.softmax`,
    a method, computes `torch.nn.functional.softmax`); `op_implied(Op, Type, Keyword, Repr)`: that
    spelling fixes the operation's input Keyword to the literal Repr (`torch.square`: exponent 2)."""
    facts = [f'input_keyword("{_escape(name)}","{_escape(keyword)}",{position}).'
             for name, pairs in sorted(catalogue.input_keywords().items()) for keyword, position in pairs]
    facts += [f'input_default("{_escape(name)}","{_escape(keyword)}","{_escape(default)}").'
              for name, pairs in sorted(catalogue.input_defaults().items()) for keyword, default in pairs]
    facts += [f'ctor_keyword("{_escape(name)}","{_escape(keyword)}",{position}).'
              for name, signature in sorted(catalogue.constructors().items()) for position, keyword in enumerate(signature.positional)]
    facts += [f'library_module("{_escape(name)}").' for name, kind in sorted(catalogue.kinds().items()) if kind == "module"]
    facts += [f'op_spelling("{_escape(s.op)}","{_escape(s.name)}",{s.form}).' for s in catalogue.spellings()]
    facts += [f'op_implied("{_escape(s.op)}","{_escape(s.name)}","{_escape(key)}","{_escape(value)}").'
              for s in catalogue.spellings() for key, value in s.implied]
    return "\n".join(facts) + "\n"


@lru_cache(maxsize=4)
def known_relations(programs: tuple[Path, ...] = (MAIN_PROGRAM,), extra_program: str = "") -> dict[str, set[int]]:
    """Every relation a query over `programs` (and the program text `extra_program`) may
    name, with its arities: the input relations and each relation a rule of the programs defines."""
    import clingo.ast

    known: dict[str, set[int]] = {}
    for relation, (cols, _) in RELATIONS.items():
        known.setdefault(relation, set()).add(len(cols))

    def head(statement) -> None:
        if statement.ast_type == clingo.ast.ASTType.Rule and statement.head.ast_type == clingo.ast.ASTType.Literal:
            atom = statement.head.atom
            if atom.ast_type == clingo.ast.ASTType.SymbolicAtom and atom.symbol.ast_type == clingo.ast.ASTType.Function:
                known.setdefault(atom.symbol.name, set()).add(len(atom.symbol.arguments))

    clingo.ast.parse_string(program_source(programs), head)
    if extra_program:
        clingo.ast.parse_string(extra_program, head)
    return known


def relations_read(programs: Sequence[Path], extra_program: str = "") -> set[str]:
    """The input relations the programs mention: the only facts worth loading."""
    return set(_relations_read(tuple(programs), extra_program))


@lru_cache(maxsize=16)  # every file of a run asks the same: no need to scan the programs' text again
def _relations_read(programs: tuple[Path, ...], extra_program: str) -> frozenset[str]:
    words = set(_WORD.findall(extra_program))
    for program in programs:
        text = "\n".join(line for line in _program_text(program).splitlines() if not line.lstrip().startswith("%"))
        words |= set(_WORD.findall(text))
    return frozenset(words & set(RELATIONS))


def fact_terms(facts: FileFacts, relations: set[str] | None = None) -> dict[str, str]:
    """Each relation's rows as the text of one clingo tuple of tuples (the hot path of loading).

    Each relation is one `%` format over all its fields, which is faster than one format per row."""
    out = {}
    for relation, rows in facts.rows.items():
        if relations is not None and relation not in relations:
            continue
        out[relation] = "(" + (_FORMATS[relation] * len(rows)) % flat_fields(relation, rows, escape_column) + ")"
    return out


def symbol_value(symbol: clingo.Symbol):
    """A clingo symbol as a plain Python value (numbers, strings, or term text)."""
    if symbol.type == clingo.SymbolType.Number:
        return symbol.number
    if symbol.type == clingo.SymbolType.String:
        return symbol.string
    return str(symbol)


@dataclass
class Model:
    """The derived relations of one file: predicate name -> rows of argument values.

    A value is what `BACKEND` reads: with clingo's C bindings, a symbol's id (an int); clingo
    interns every symbol, so two ids are equal exactly when their symbols are, and counting and
    grouping rows (`ids`) need no `clingo.Symbol` objects, whose hashing and comparison each call
    into clingo. With the public API, the `clingo.Symbol` itself."""

    relations: dict[str, list[tuple]]

    def get(self, name: str) -> list[tuple[clingo.Symbol, ...]]:
        symbol = BACKEND.symbol
        return [tuple(map(symbol, row)) for row in self.relations.get(name, [])]

    def ids(self, name: str) -> list[tuple]:
        """The rows as opaque values: equal exactly when their symbols are."""
        return self.relations.get(name, [])


# Atoms are read from the grounder (`symbolic_atoms`), never from a model, so nothing is
# solved. Showing no atom spares clingo a printed string per atom for its output table,
# and an observer that replaces the solver spares it handing every ground fact to clasp:
# the grounder alone decides a stratified program, so both would be wasted grounding time.
_SHOW_NOTHING = "#show.\n"


class _NoSolver:
    """A ground-program observer with no callbacks: the ground program goes nowhere."""


def _loaded(programs: Sequence[Path], text: str, relations: Iterable[str],
            loading: Callable[[Iterable[str]], str] = loading_rules,
            warnings: list[str] | None = None) -> tuple[clingo.Control, list[str]]:
    """A control with `programs`, `text` and the loading rules of `relations` added (not
    grounded), and the list its messages go to. With `warnings`, clingo's warnings are on,
    and each message also goes there as `CODE: message`."""
    messages: list[str] = []

    def log(code: clingo.MessageCode, message: str) -> None:
        messages.append(message)
        if warnings is not None:
            warnings.append(f"{code.name}: {message}")

    control = clingo.Control([] if warnings is not None else ["--warn=none"], logger=log)
    control.register_observer(_NoSolver(), replace=True)
    try:
        for program in programs:
            control.load(str(program))
        library = catalogue_facts() if MAIN_PROGRAM in programs else ""
        control.add("base", [], loading(relations) + "\n" + _SHOW_NOTHING + library + text)
    except RuntimeError as error:  # clingo logged why: keep its first message, with position
        raise RuntimeError(messages[0].strip() if messages else str(error)) from None
    return control, messages


# Program parts (`#program <part>.`) holding the rules of constructs most files lack, and the
# input relation that says a file has one: a part is grounded only for such a file. Every
# rule costs every file's grounding, for each of its body literals, even when nothing
# matches it.
CONSTRUCT_PARTS = {"walrus": "named_expr", "match": "match_subject", "unmodelled": "unmodelled",
                   "imported": "import_attr", "entries": "used_elsewhere"}


def atom_rows(control: clingo.Control, name: str, arity: int) -> list[tuple]:
    """The arguments of every atom `name/arity` of a ground program, as `BACKEND` holds them
    (symbol ids, or `clingo.Symbol`s: see `Model`)."""
    return BACKEND.atom_rows(control, name, arity)


class Engine:
    """Grounds programs over a file's facts and reads relations back. It owns what outlives
    one ground: the controls `prepare` loaded ahead (each serves the next ground of the same
    programs, in this process or in each fork of it), the relations each prepared program
    set defines, and, in a process that exits after its files (`retain_controls`), the
    controls kept alive until then."""

    def __init__(self) -> None:
        self.prepared: dict[tuple, tuple[clingo.Control, list[str]]] = {}
        # the relations (with their arities) of each prepared program set: `solve` reads the
        # relations it keeps without asking clingo for every signature of the ground program,
        # which walks all its atoms (in a fork: the parent's copy)
        self.defined: dict[tuple, dict[str, set[int]]] = {}
        # clingo frees a ground program object by object; a process that exits drops it in one go
        self.retained: list[clingo.Control] | None = None

    def prepare(self, programs: Sequence[Path], text: str,
                loading: Callable[[Iterable[str]], str] = loading_rules) -> None:
        """Load `programs` and `text` now, for the next `solve` of them in this process or in
        each fork of it: a fork then skips parsing them, which every file would otherwise repeat.

        It also grounds no part once: clingo rewrites and checks every statement added since
        its last `ground` (all parts, also those a file never grounds) at the start of a ground,
        and this way a fork finds that done (a quarter of what grounding costs a file with no
        facts). Nothing is grounded: the file's `ground` is the first step with any rule."""
        relations = frozenset(relations_read(programs, text))
        control, messages = _loaded(programs, text, relations, loading)
        try:
            control.ground([])
        except RuntimeError:  # a program clingo rejects: each file's own `ground` reports it, as without preparing
            return
        self.prepared[(tuple(programs), text, relations, loading)] = control, messages
        self.defined[(tuple(programs), text)] = known_relations(tuple(programs), text)

    def ground(self, programs: Sequence[Path], text: str, parts: Sequence[tuple[str, Sequence[clingo.Symbol]]] = (),
               facts: dict[str, str] | None = None, variant: str = "full",
               loading: Callable[[Iterable[str]], str] = loading_rules,
               warnings: list[str] | None = None) -> clingo.Control:
        """A clingo control with `programs`, the program `text` (rules, facts) and the input
        relations `facts` (from `fact_terms`) loaded and grounded: the base part, the analyses'
        slots as `variant` fills them, `parts`, and the parts of the constructs the file has.
        `loading` writes the rules that load the facts (adopter/datalog/batch.py has its own).
        With `warnings`, clingo's warnings go there (`_loaded`), in a control loaded for this call."""
        facts = facts or {}
        key = (tuple(programs), text, frozenset(facts.keys() & RELATIONS.keys()), loading)
        prepared = self.prepared.pop(key, None) if warnings is None else None
        control, messages = prepared or _loaded(programs, text, facts, loading, warnings)
        parts = [("base", []), *analysis_parts(variant), *parts,
                 *((part, []) for part, relation in CONSTRUCT_PARTS.items() if facts.get(relation, "()") != "()")]
        try:
            BACKEND.ground(control, parts, facts, messages)
        except RuntimeError as error:
            if "bad_alloc" in str(error):  # clingo's allocation failed: over the process's memory limit
                raise MemoryError(str(error)) from None
            raise
        return control

    def keep_alive(self, control: clingo.Control) -> None:
        """Keep `control` until this process exits, where `retain_controls` asked for that."""
        if self.retained is not None:
            self.retained.append(control)

    def retain_controls(self) -> None:
        """Keep every control of this process alive until it exits (call only in a short-lived process)."""
        self.retained = []

    def solve(self, facts: FileFacts, extra_program: str = "",
              parts: Sequence[tuple[str, Sequence[clingo.Symbol]]] = (), programs: Sequence[Path] = (MAIN_PROGRAM,),
              keep: Iterable[str] | None = None, variant: str = "full") -> Model:
        """Ground `programs` over `facts` (the analyses as `variant` has them); return the atoms
        (of `keep`, or all)."""
        control = self.ground(programs, extra_program, parts, fact_terms(facts, relations_read(programs, extra_program)),
                              variant)
        # The programs are stratified, so grounding alone decides every atom (all become
        # facts): read the wanted relations straight from the grounder, without solving.
        defined = self.defined.get((tuple(programs), extra_program)) if keep is not None else None
        if defined is not None:
            signatures = [(name, arity) for name in sorted(set(keep)) for arity in sorted(defined.get(name, ()))]
        else:
            wanted = set(keep) if keep is not None else None
            signatures = [(name, arity) for name, arity, positive in control.symbolic_atoms.signatures
                          if positive and (wanted is None or name in wanted)]
        relations: dict[str, list] = {}
        for name, arity in signatures:
            rows = atom_rows(control, name, arity)
            if rows or defined is None:
                relations.setdefault(name, []).extend(rows)
        self.keep_alive(control)
        return Model(relations)


# This process's engine: the pipeline prepares it in the parent, and each fork inherits it with
# what was prepared. The functions below are its methods, for callers that need no other.
ENGINE = Engine()
prepare, ground, solve = ENGINE.prepare, ENGINE.ground, ENGINE.solve
keep_alive, retain_controls = ENGINE.keep_alive, ENGINE.retain_controls
