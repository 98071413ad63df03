"""Datalog queries over facts and every derived relation, answered as a DataFrame.

A query is the body of one rule: literals over known relations (the fact relations and
those the analyses define), comparisons and aggregates. It is checked before clingo
runs it: its text is scanned outside string literals for anything that is not a body
(directives such as `#include` or `#script`, comments, `@` calls into Python), then
parsed, and every atom must name a known relation with its arity. The program that runs
is printed back from the checked syntax tree, not the user's text.

A query whose literals fall into groups that share no variable asks for every combination
of their answers (`node_type(A, _), node_type(B, _)`: the square of the nodes), which is
refused unless asked for. Each file's answers are computed in a worker process under time
and memory limits, like a file's analysis: a query over them stops with one error and gives
no answers, never some of them as if they were all.
"""

from __future__ import annotations

import difflib
import json
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import clingo
import clingo.ast

from adopter.extract.schema import RELATIONS
from adopter.records import AdopterError, Diagnostic
from adopter.support.cache import ResultCache, entry_key
from adopter.datalog.engine import (MAIN_PROGRAM, QUERY_PROGRAMS, known_relations, prepare, program_source,
                                    retain_controls, solve, symbol_value)
from adopter.support.forks import Limits, failure_reason, map_forked

_PROGRAMS = (MAIN_PROGRAM, *QUERY_PROGRAMS)  # the analyses, and the relations only queries read
from adopter.extract.python_facts import FileFacts
from adopter.extract.tables import read_tables

if TYPE_CHECKING:
    import pandas as pd

_RESULT = "adopter_query_result"
# `#` words a body may hold: aggregate functions and constants. Everything else after a `#`
# is a directive (`#include` reads a file while parsing, `#script` runs code).
_BODY_WORDS = {"count", "sum", "min", "max", "inf", "sup", "true", "false"}
_WORD = re.compile(r"#([A-Za-z_]*)")
_BODY_ATOMS = {clingo.ast.ASTType.SymbolicAtom, clingo.ast.ASTType.Comparison, clingo.ast.ASTType.BooleanConstant,
               clingo.ast.ASTType.BodyAggregate, clingo.ast.ASTType.Aggregate}


def _invalid(text: str, reason: str) -> AdopterError:
    return AdopterError(Diagnostic("<query>", None, None, f"invalid query {text!r}: {reason}"))


def _scan_outside_strings(text: str) -> None:
    """Refuse what only a program, not a rule body, may hold; before any parser sees it."""
    i = 0
    while i < len(text):
        char = text[i]
        if char == '"':
            i += 1
            while i < len(text) and text[i] != '"':
                i += 2 if text[i] == "\\" else 1
            if i >= len(text):
                raise _invalid(text, "a string is not closed")
        elif char == "#":
            word = _WORD.match(text, i).group(1)
            if word not in _BODY_WORDS:
                raise _invalid(text, f"`#{word}` is not allowed: a query is the body of a rule, without directives")
            i += len(word)
        elif char == "%":
            raise _invalid(text, "comments (`%`) are not allowed")
        elif char == "@":
            raise _invalid(text, "calls into Python (`@name(...)`) are not allowed")
        elif char == "\0":
            raise _invalid(text, "a query cannot hold a NUL character")
        i += 1


def _walk(node):
    yield node
    for key in node.child_keys:
        child = getattr(node, key)
        for item in child if isinstance(child, (list, clingo.ast.ASTSequence)) else [child]:
            if isinstance(item, clingo.ast.AST):
                yield from _walk(item)


@dataclass(frozen=True)
class Query:
    """A checked query: its named variables (in order of appearance), the rule that answers
    it (program text printed from the checked syntax tree), and its literals grouped by the
    variables they share (more than one group: a product)."""

    text: str
    variables: list[str]
    rule: str
    groups: list[list[str]]
    relations: tuple[str, ...] = ()  # the relations its literals name


# what a query may take by default, per file: a file's analysis's limits (the CLI's --file-timeout, --file-memory)
DEFAULT_TIMEOUT, DEFAULT_MEMORY = 300.0, 4096


class QueryStopped(AdopterError):
    """A limit stopped the query: it gives no answers."""


def parse_query(text: str) -> Query:
    """Check a query (AdopterError says why it is not one)."""
    _scan_outside_strings(text)
    statements: list = []
    messages: list[str] = []
    try:
        clingo.ast.parse_string(f"{_RESULT} :- {text.strip().rstrip('.')}.", statements.append,
                                logger=lambda _code, message: messages.append(message))
    except RuntimeError:
        reason = messages[0].split("error:", 1)[-1].strip() if messages else "cannot parse"
        raise _invalid(text, reason) from None
    rules = [s for s in statements if s.ast_type != clingo.ast.ASTType.Program]
    if len(rules) != 1 or rules[0].ast_type != clingo.ast.ASTType.Rule:
        raise _invalid(text, "a query is one rule body (literals separated by commas)")
    body = list(rules[0].body)
    known = known_relations(_PROGRAMS)
    for literal in body:
        if literal.ast_type != clingo.ast.ASTType.Literal or literal.atom.ast_type not in _BODY_ATOMS:
            raise _invalid(text, f"`{literal}` is not a body literal")
        for node in _walk(literal):
            if node.ast_type == clingo.ast.ASTType.SymbolicAtom:
                _check_atom(text, node.symbol, known)
    variables: list[str] = []
    for literal in body:
        if literal.atom.ast_type in (clingo.ast.ASTType.SymbolicAtom, clingo.ast.ASTType.Comparison):
            found = sorted((n.location.begin.column, n.name) for n in _walk(literal)
                           if n.ast_type == clingo.ast.ASTType.Variable and n.name[0].isupper())
            variables += [name for _, name in found if name not in variables]
    head = f"{_RESULT}({', '.join(variables)})" if variables else _RESULT
    relations = tuple(sorted({n.symbol.name for literal in body for n in _walk(literal)
                              if n.ast_type == clingo.ast.ASTType.SymbolicAtom}))
    return Query(text, variables, f"{head} :- {'; '.join(map(str, body))}.", _groups(body), relations)


def _groups(body: list) -> list[list[str]]:
    """The body's literals joined by the variables they share (`_` shares nothing); literals
    without a variable filter every answer and join no group."""
    named = [(str(literal), {n.name for n in _walk(literal) if n.ast_type == clingo.ast.ASTType.Variable
                             and n.name != "_"}) for literal in body]
    groups: list[tuple[list[str], set[str]]] = []
    for text, names in named:
        if not names:
            continue
        joined = [g for g in groups if g[1] & names]
        merged = ([text], set(names))
        for literals, variables in joined:
            merged = (literals + merged[0], variables | merged[1])
            groups.remove((literals, variables))
        groups.append(merged)
    return [literals for literals, _ in groups]


def _check_atom(text: str, symbol, known: dict[str, set[int]]) -> None:
    if symbol.ast_type != clingo.ast.ASTType.Function or symbol.external:
        raise _invalid(text, f"`{symbol}` is not an atom over a relation")
    name, arity = symbol.name, len(symbol.arguments)
    if name not in known:
        close = difflib.get_close_matches(name, known, n=1)
        raise _invalid(text, f"unknown relation `{name}`" + (f" (did you mean `{close[0]}`?)" if close else ""))
    if arity not in known[name]:
        arities = " or ".join(map(str, sorted(known[name])))
        raise _invalid(text, f"`{name}` has {arities} arguments, not {arity}")


def read_facts(folder: Path) -> list[FileFacts]:
    """The facts of every file in fact tables `adopter facts --out` wrote. Raises AdopterError
    when the folder holds none."""
    if not (folder / "module.tsv").exists():
        raise AdopterError(Diagnostic(str(folder), None, None,
                                      f"no fact tables here (run `adopter facts PATH --out {folder}`)"))
    return read_tables(folder)


def run_query(all_facts: list[FileFacts], text: str, timeout: float | None = DEFAULT_TIMEOUT,
              memory: int | None = DEFAULT_MEMORY, allow_product: bool = False, jobs: int | None = None,
              cache_dir: Path | None = None) -> "pd.DataFrame":
    """Answer `text` (a rule body such as `qname(E, "torch.nn.Linear")`) for every file.

    Returns one row per answer: a `file` column, then one column per named variable. Each
    file is answered in a worker process (`jobs` at a time) within `timeout` seconds and
    `memory` MB beyond what the worker starts with (None: no limit); a file over them raises
    QueryStopped (no answers). A query whose literals share no variable between groups
    raises AdopterError unless `allow_product`. With `cache_dir`, the derived relations the
    query names are kept per file (by its facts); a later query over the same files that names
    only kept relations is answered from them, without running the analyses again."""
    import pandas as pd  # lazily: the CLI's other commands do not need it

    query = parse_query(text)
    if len(query.groups) > 1 and not allow_product:
        groups = ", ".join("{" + ", ".join(group) + "}" for group in query.groups)
        raise _invalid(text, f"its literals fall into {len(query.groups)} groups that share no variable ({groups}): "
                             "its answers would be every combination of theirs; join them by a shared variable, "
                             "or ask for the product (--allow-product)")
    rows = []
    derived = tuple(name for name in query.relations if name not in RELATIONS)
    cache = ResultCache(cache_dir)
    keys = [_relation_keys(facts, derived) if cache.folder is not None else {} for facts in all_facts]
    # (a query of the extractor's relations alone needs no analysis: its kept text is empty)
    kept = [_kept(cache, key) if derived else "" for key in keys] if derived and cache.folder is not None \
        else ["" if not derived else None for _ in all_facts]
    if not all(kept):
        prepare(_PROGRAMS, query.rule)  # loaded once here: each worker grounds its copy
    workers = min(jobs or os.cpu_count() or 1, max(len(all_facts), 1))
    limits = Limits(timeout or None, memory or None)
    tasks = [(facts, query.rule, text, () if kept[i] is not None else derived if keys[i] else ())
             for i, (facts, text) in enumerate(zip(all_facts, kept))]
    for index, ok, value in map_forked(_answers, tasks, workers, limits):
        if not ok:
            why = failure_reason(value, "query", ("--timeout", "--memory"))
            raise QueryStopped(Diagnostic(all_facts[index].path, None, None, f"{why}; no answers are given"))
        if isinstance(value, str):  # clingo refused the rule (e.g. a variable only a negated literal binds)
            raise _invalid(text, value)
        answers, atoms = value
        for name, lines in atoms.items():
            cache.put(keys[index][name], "relation", {"relation": name}, [lines])
        rows += [(all_facts[index].path, *answer) for answer in answers]
    return pd.DataFrame(rows, columns=["file"] + query.variables).sort_values(["file"] + query.variables, kind="stable",
                                                                             ignore_index=True)


def _answers(task) -> tuple[list[tuple], dict[str, str]] | str:
    """In a worker: one file's answers to the query's rule, as plain values (from the kept
    relations' atoms where given, else from the analyses, with the atoms of the `keep`
    relations to store), or why clingo refused the rule."""
    facts, rule, kept, keep = task
    retain_controls()  # this process ends with its file
    try:
        if kept is not None:
            model = solve(facts, extra_program=f"{rule}\n{kept}", programs=(), keep={_RESULT})
        else:
            model = solve(facts, extra_program=rule, programs=_PROGRAMS, keep={_RESULT, *keep})
    except RuntimeError as error:
        return str(error).split("error:", 1)[-1].strip()
    atoms = {name: "\n".join(f"{name}({','.join(map(str, args))})." if args else f"{name}."
                              for args in model.get(name)) for name in keep}
    return [tuple(symbol_value(a) for a in args) for args in model.get(_RESULT)], atoms


def _relation_keys(facts: FileFacts, names) -> dict[str, str]:
    """The cache key of each of a file's derived relations `names`: its facts (serialised once)
    and Adopter's code."""
    content = json.dumps([facts.path, facts.rows], sort_keys=True).encode()
    return {name: entry_key(content, "query relation", name) for name in names}


def _kept(cache: ResultCache, keys: dict[str, str]) -> str | None:
    """The atoms of every relation in `keys` as program text, if each is kept; None if one is not.
    Each atom is read back as a term (`clingo.parse_term`) and printed again: an entry that holds
    anything but atoms of its relation is a miss, never program text."""
    texts = []
    for name, key in keys.items():
        text = cache.get(key, "relation", lambda value, stored, name=name: _atoms(stored[0], name)
                         if value == {"relation": name} and len(stored) == 1 else None)
        if text is None:
            return None
        texts.append(text)
    return "\n".join(texts)


def _atoms(text: str, name: str) -> str | None:
    lines = []
    for line in text.splitlines():
        try:
            symbol = clingo.parse_term(line.removesuffix("."))
        except RuntimeError as error:  # (not a term)
            raise ValueError(str(error)) from None
        if symbol.type != clingo.SymbolType.Function or symbol.name != name or symbol.negative:
            raise ValueError(f"not an atom of {name}")
        lines.append(f"{symbol}.")
    return "\n".join(lines)


_DOC = re.compile(r"%\*! (.*?) \*%")
_HEAD = re.compile(r"(\w+)\(([^)]*)\)")


def relation_catalogue() -> list[tuple[str, str, str]]:
    """(name/arity, columns, meaning) of each relation a query may name that says what it means:
    the extractor's (their `%*!` lines in datalog/schema/facts.lp) and those the analyses define
    under a `%*! name(Columns): meaning *%` line; relations without one are the analyses' helpers."""
    known = known_relations(_PROGRAMS)
    documented: dict[tuple[str, int], tuple[str, str]] = {}
    for header in _DOC.findall(program_source(_PROGRAMS)):
        heads, _, meaning = header.partition(": ")
        for part in heads.split(" / "):
            m = _HEAD.fullmatch(part.strip())
            if m is not None:
                columns = [c.strip() for c in m.group(2).split(",") if c.strip()]
                documented.setdefault((m.group(1), len(columns)), (", ".join(columns), meaning.strip()))
    return sorted((f"{name}/{arity}", *documented[(name, arity)])
                  for name, arities in known.items() for arity in arities if (name, arity) in documented)


def locate_nodes(frame: "pd.DataFrame", all_facts: list[FileFacts]) -> "pd.DataFrame":
    """Beside each column of node terms (`n(Ctx, Expr)`, and a Sequential layer's `s(...)`,
    `c(...)`), the line, the function (`Class.method`, or a module-level function's name) and the
    source text of the node's expression in its file: `X.line`, `X.function`, `X.text` (an answer
    is a place in the code, not only the analysis's term for it)."""
    if frame.empty:
        return frame
    spans: dict = {}
    owners: dict = {}
    sources: dict[str, list[bytes] | None] = {}
    located = frame.copy()
    for column in [c for c in frame.columns if c != "file"]:
        exprs = [_node_expr(value) for value in frame[column]]
        if any(e is None for e in exprs):
            continue
        if not spans:  # (read from the facts once, and only where a column holds nodes)
            spans = {facts.path: {row[0]: row[3:7] for row in facts.rows["expr"]} for facts in all_facts}
            owners = {facts.path: _owners(facts) for facts in all_facts}
        places = [spans.get(path, {}).get(e) for path, e in zip(frame["file"], exprs)]
        at = located.columns.get_loc(column) + 1
        located.insert(at, f"{column}.line", [p[0] if p else None for p in places])
        located.insert(at + 1, f"{column}.function", [owners.get(path, {}).get(e) for path, e in zip(frame["file"], exprs)])
        located.insert(at + 2, f"{column}.text", [_source_text(path, p, sources) if p else None
                                                  for path, p in zip(frame["file"], places)])
    return located


def _owners(facts: FileFacts) -> dict[int, str]:
    """Expression -> the function holding it, as `Class.method` (a method) or `name` (a function)."""
    classes = {row[0]: row[1] for row in facts.rows["class_def"]}
    of_class = {row[0]: classes.get(row[1]) for row in facts.rows["function_class"]}
    functions = {row[0]: (f"{of_class[row[0]]}.{row[1]}" if of_class.get(row[0]) else row[1])
                 for row in facts.rows["function_def"]}
    statements = {row[0]: functions.get(row[1]) for row in facts.rows["stmt"]}
    return {row[0]: statements.get(row[1]) for row in facts.rows["expr"]}


def _node_expr(value) -> int | None:
    """The expression id of a node term's text, else None."""
    if not isinstance(value, str) or not re.match(r"[nsc]\(", value):
        return None
    try:
        term = clingo.parse_term(value)
    except RuntimeError:
        return None
    if term.type == clingo.SymbolType.Function and term.name in ("n", "s", "c") and len(term.arguments) >= 2 \
            and term.arguments[1].type == clingo.SymbolType.Number:
        return term.arguments[1].number
    return None


def _source_text(path: str, span: tuple[int, int, int, int], sources: dict) -> str | None:
    """The source of `span` (lines from 1, columns as UTF-8 byte offsets, as `ast` gives them), on one line."""
    if path not in sources:
        from adopter.extract.sources import decode_source, read_bytes

        data, _problem = read_bytes(Path(path))
        text, _problem = decode_source(data, Path(path)) if data is not None else (None, None)
        sources[path] = [line.encode("utf-8") for line in text.splitlines()] if text is not None else None
    lines = sources[path]
    line, col, end_line, end_col = span
    if lines is None or end_line > len(lines):
        return None
    if line == end_line:
        piece = lines[line - 1][col:end_col]
    else:
        piece = b"\n".join([lines[line - 1][col:], *lines[line:end_line - 1], lines[end_line - 1][:end_col]])
    return " ".join(piece.decode("utf-8", "replace").split())
