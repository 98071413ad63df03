"""Parse `.adopt` rule files into `Rule` values, with `file:line:col` errors.

Rules are data: the parser builds the dataclasses of adopter/rules/model.py and never evaluates Python.
"""

from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path

import lark

from adopter.records import AdopterError, Diagnostic
from adopter.rules.model import Arg, Input, PatternNode, Rule
from adopter.rules.typecheck import check_types, named_types

_GRAMMAR = (Path(__file__).resolve().parent / "grammar.lark").read_text()
# No `cache=True`: lark would load its parse tables from a pickle at a predictable name in
# the shared temp folder, which any local user can plant. Building them takes time, paid
# only when a rule is parsed: parsed rules are cached (adopter/rules/registry.py), as JSON.
_PARSER = lark.Lark(_GRAMMAR, parser="lalr", propagate_positions=True)


_RULE_ID = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def _error(path: str, line: int | None, col: int | None, message: str) -> AdopterError:
    return AdopterError(Diagnostic(path, line, col, message))


# The grammar's terminals as a rule's author writes them (adopter/rules/grammar.lark), for errors:
# a fixed string as itself, the others in words
_IN_DSL_WORDS = {
    **{t.name: repr(t.pattern.value) for t in _PARSER.terminals if isinstance(t.pattern, lark.lexer.PatternStr)},
    "_ARROW": "'->'", "VAR": "a $variable", "QNAME": "a qualified name", "NAME": "a name", "SEP": "';' or '&'",
    "BINOP": "an operator", "UNOP": "'-'", "SIGNED_NUMBER": "a number", "STRING": "a string",
    "CONST_NAME": "True, False or None", "CODE": "`source text`", "HALF": "half", "PARITY": "'::2' or '1::2'",
    "ITEM": "0 or 1", "SETTING_KEY": "a setting", "SETTING_VALUE": "a value", "EXTERN_KEY": "extern:",
    "PART_KEY": "init: or forward:", "$END": "the end of the file",
}


def _constant(tree: lark.Tree) -> str:
    token = tree.children[0]
    if token.type == "SIGNED_NUMBER":
        text = str(token)
        return repr(float(text)) if any(c in text for c in ".eE") else repr(int(text))
    if token.type == "STRING":
        return repr(str(token)[1:-1])
    return str(token)  # True / False / None


def _arg(tree) -> Arg:
    if isinstance(tree, lark.Token) and tree.type == "CODE":
        return Arg(code=" ".join(str(tree)[1:-1].split()))
    if isinstance(tree, lark.Token):  # VAR
        return Arg(var=str(tree))
    if tree.data in ("first_half", "second_half"):
        return Arg(var=str(tree.children[0]), part=("half", 0 if tree.data == "first_half" else 1))
    if tree.data == "every_other":
        return Arg(var=str(tree.children[0]), part=("parity", 0 if str(tree.children[1]) == "::2" else 1))
    if tree.data == "reached":
        return Arg(var=str(tree.children[0]), reached=True)
    if tree.data == "last_item":
        return Arg(var=str(tree.children[0]), part=("item", int(str(tree.children[1]))))
    return Arg(const=_constant(tree))


def _input(position: int | str, tree, negated: bool = False, element: int | None = None) -> Input:
    """An input, with where its argument is written (a token, or a constant's tree)."""
    line, col = (tree.line, tree.column) if isinstance(tree, lark.Token) else (tree.meta.line, tree.meta.column)
    return Input(position, _arg(tree), negated=negated, line=line, col=col, element=element)


def _inputs(position: int | str, tree, negated: bool = False) -> list[Input]:
    """The input at `position`; a tuple literal (`($a, $b)`) gives one input per element."""
    if isinstance(tree, lark.Tree) and tree.data == "elements":
        if negated or any(isinstance(c, lark.Tree) and c.data == "elements" for c in tree.children):
            raise _Misplaced(tree.meta.line, tree.meta.column,
                             "a tuple `(...)` is an input of its own, of `$vars`, halves and constants (not nested, not after `!=`)")
        return [_input(position, child, element=j) for j, child in enumerate(tree.children)]
    return [_input(position, tree, negated)]


# Each setting's two values (the default first: adopter/rules/model.py), checked in this order
_SETTING_VALUES = {"guards": ("feasible", "equal"), "scope": ("methods", "functions"), "fallback": ("none", "eager"),
                   "metadata": ("breaks", "allowed"), "reads": ("breaks", "allowed"), "anchor": ("forward", "init")}


class _Misplaced(Exception):
    """A construct the grammar accepts where the DSL does not (becomes a file:line:col error)."""

    def __init__(self, line: int, col: int, message: str):
        super().__init__(message)
        self.line, self.col, self.message = line, col, message


def _node(tree: lark.Tree) -> PatternNode:
    line, col = tree.meta.line, tree.meta.column
    if tree.data == "wildcard":
        return PatternNode("wildcard", line=line, col=col)
    out = tree.children[-1]
    at = {"line": line, "col": col, "output_line": out.line, "output_col": out.column}
    if tree.data in ("layer", "wrapped_layer"):
        callee, *inputs, _ = tree.children
        parsed, index = [], 0
        for item in inputs:
            if item is None:
                continue
            if item.data == "positional":
                parsed += _inputs(index, item.children[0])
                index += 1
            else:
                name, value = item.children
                parsed += _inputs(str(name), value, negated=item.data == "keyword_not")
        return PatternNode("layer", callee="|".join(map(str, callee.children)), inputs=tuple(parsed), output=str(out),
                           wrapped=tree.data == "wrapped_layer", **at)
    if tree.data == "binary":
        left, op, right, _ = tree.children
        return PatternNode("binary", op=str(op), inputs=(_input(0, left), _input(1, right)), output=str(out), **at)
    if tree.data == "invert":
        operand, _ = tree.children
        return PatternNode("unary", op="~", inputs=(_input(0, operand),), output=str(out), **at)
    op, operand, _ = tree.children
    return PatternNode("unary", op=str(op), inputs=(_input(0, operand),), output=str(out), **at)


def _side(tree: lark.Tree) -> list[PatternNode]:
    if tree.data == "empty":
        return []
    nodes, ordered = [], True
    for child in tree.children:
        if isinstance(child, lark.Token):  # a separator
            ordered = str(child) == ";"
        else:
            nodes.append(replace(_node(child), ordered=ordered))
    return nodes


def parse_rule(text: str, path: str) -> Rule:
    """Parse one rule file's text; raise `AdopterError` (file:line:col) when malformed."""
    if "\0" in text:
        before = text[: text.index("\0")]
        raise _error(path, before.count("\n") + 1, len(before) - before.rfind("\n"), "a rule cannot hold a NUL character")
    try:
        tree = _PARSER.parse(text)
    except lark.exceptions.UnexpectedInput as error:
        token = getattr(error, "token", None)
        if isinstance(error, lark.exceptions.UnexpectedEOF) or (token is not None and token.type == "$END"):
            found = "unexpected end of input"
        else:
            found = f"unexpected {str(token)!r}" if token is not None and str(token) else "unexpected input"
        expected = sorted({_IN_DSL_WORDS.get(name, name) for name in
                           getattr(error, "expected", None) or getattr(error, "allowed", None) or []})
        hint = (f"; expected {expected[0]}" if len(expected) == 1 else
                f"; expected one of {', '.join(expected[:8])}" if expected else "")
        raise _error(path, error.line, error.column, f"{found}{hint}") from None
    doc = "\n".join(line[1:].strip() for line in text.splitlines() if line.startswith("#"))
    stem_id, _, shape = Path(path).stem.partition(".")
    rule = Rule(id=stem_id, path=path, shape=shape, doc=doc)
    seen: set[str] = set()
    externs: list[lark.Token] = []
    for item in tree.children:
        key = str(item.children[0])
        if key in seen:
            raise _error(path, item.meta.line, item.meta.column, f"duplicate `{key}:`")
        seen.add(key)
        if item.data == "setting":
            setattr(rule, key if key != "rule" else "id", str(item.children[1]))
        elif item.data == "extern":
            externs = item.children[1:]
            rule.extern = tuple(str(name) for name in externs)
        else:
            try:
                source, target = _side(item.children[1]), _side(item.children[2])
            except _Misplaced as error:
                raise _error(path, error.line, error.col, error.message) from None
            setattr(rule, f"{key}_source", source)
            setattr(rule, f"{key}_target", target)
    _check(rule)
    check_types(rule)
    _check_externs(rule, externs)
    return rule


def _check(rule: Rule) -> None:
    """The settings' values and the parts a rule needs (the patterns' types: adopter/rules/typecheck.py)."""
    path = rule.path
    if not _RULE_ID.fullmatch(rule.id):
        raise _error(path, 1, 1, f"rule id {rule.id!r} must be letters, digits and `_` (it names the rule "
                                 "everywhere, and its file is `<id>.adopt`)")
    stem = Path(path).stem
    if rule.key != stem:
        raise _error(path, 1, 1, f"rule id {rule.id!r} differs from its file name {stem!r} (`<id>.adopt`, or "
                                 "`<id>.<shape>.adopt` for another code shape of the same rule)")
    if rule.shape and not _RULE_ID.fullmatch(rule.shape):
        raise _error(path, 1, 1, f"shape {rule.shape!r} (the file name after the id) must be letters, digits and `_`")
    for setting, (first, second) in _SETTING_VALUES.items():
        value = getattr(rule, setting)
        if value not in (first, second):
            raise _error(path, None, None, f"{setting} must be `{first}` or `{second}`, not {value!r}")
    if not rule.forward_source:
        raise _error(path, None, None, "a rule needs a non-empty `forward:` source pattern")
    if rule.anchor == "init" and not rule.init_source:
        raise _error(path, None, None, "`anchor: init` needs an `init:` source pattern")
    for part in (rule.init_source, rule.init_target, rule.forward_target):
        for node in part:
            if not node.ordered:
                raise _error(path, node.line, node.col, "`&` (nodes in any order) is for a `forward:` source pattern only")
    source_halves = {(item.arg.var, item.arg.part) for node in rule.forward_source for item in node.inputs
                     if item.arg.part is not None and item.arg.part[0] == "half"}
    for part, where in ((rule.init_source, "init"), (rule.init_target, "target"), (rule.forward_target, "target"),
                        (rule.forward_source, "forward")):
        for node in part:
            for item in node.inputs:
                # a forward target may pass on a half the source takes: the code's expression for it
                passed_half = part is rule.forward_target and (item.arg.var, item.arg.part) in source_halves
                if where != "forward" and (item.element is not None or (item.arg.part is not None and not passed_half)):
                    raise _error(path, item.line, item.col,
                                 "halves (`$x[:half]`), alternate items (`$x[::2]`) and tuples (`($a, $b)`) are for a "
                                 "`forward:` source pattern (a forward target may pass on a half its source takes)")
    for part in (rule.init_target, rule.forward_source, rule.forward_target):
        for node in part:
            if node.wrapped:
                raise _error(path, node.line, node.col, "`~T()` (a T or a module wrapping one) is for an `init:` source "
                                                        "pattern only")
    for part in (rule.init_target, rule.forward_target):
        for node in part:
            if len(node.callees) > 1:
                raise _error(path, node.line, node.col, "`a|b` (either type) is for a source pattern only")
    for node in rule.init_target:
        if node.output in {s.output for s in rule.init_source if len(s.callees) > 1}:
            raise _error(path, node.line, node.col,
                         f"{node.output} is built by one of several types (`a|b`): the target cannot name its "
                         "construction; pass it to the forward target instead")


def _check_externs(rule: Rule, externs: list[lark.Token]) -> None:
    """An `extern:` name is declared once, and used: a stale one would hide nothing but mislead."""
    named, listed = named_types(rule), set()
    for token in externs:
        name = str(token)
        if name in listed:
            raise _error(rule.path, token.line, token.column, f"{name} is listed twice in `extern:`")
        listed.add(name)
        if name not in named:
            raise _error(rule.path, token.line, token.column,
                         f"extern {name} is not named by the rule's patterns; remove it from `extern:`")


def load_rule(path: Path) -> Rule:
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        raise _error(str(path), None, None, f"cannot read rule: {error}") from None
    return parse_rule(text, str(path))
