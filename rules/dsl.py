"""Parse `.adopt` rule files into `Rule` values, with `file:line:col` errors.

Rules are data: the parser builds the dataclasses of rules/model.py and never evaluates Python.
"""

from __future__ import annotations

import re
from pathlib import Path

import lark

from adopter.diagnostics import AdopterError, Diagnostic
from rules.model import Arg, Input, PatternNode, Rule

_GRAMMAR = (Path(__file__).resolve().parent / "grammar.lark").read_text()
# No `cache=True`: lark would load its parse tables from a pickle at a predictable name in
# the shared temp folder, which any local user can plant. Building them costs ~50 ms, paid
# only when a rule is parsed: parsed rules are cached (rules/registry.py), as JSON.
_PARSER = lark.Lark(_GRAMMAR, parser="lalr", propagate_positions=True)


_RULE_ID = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def _error(path: str, line: int | None, col: int | None, message: str) -> AdopterError:
    return AdopterError(Diagnostic(path, line, col, message))


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
    return Arg(const=_constant(tree))


def _node(tree: lark.Tree) -> PatternNode:
    line, col = tree.meta.line, tree.meta.column
    if tree.data == "wildcard":
        return PatternNode("wildcard", line=line, col=col)
    if tree.data == "layer":
        callee, *inputs, out = tree.children
        parsed, index = [], 0
        for item in inputs:
            if item is None:
                continue
            if item.data == "positional":
                parsed.append(Input(index, _arg(item.children[0])))
                index += 1
            else:
                name, value = item.children
                parsed.append(Input(str(name), _arg(value), negated=item.data == "keyword_not"))
        return PatternNode("layer", callee=str(callee.children[0]), inputs=tuple(parsed), output=str(out),
                           line=line, col=col)
    if tree.data == "binary":
        left, op, right, out = tree.children
        return PatternNode("binary", op=str(op), inputs=(Input(0, _arg(left)), Input(1, _arg(right))),
                           output=str(out), line=line, col=col)
    op, operand, out = tree.children
    return PatternNode("unary", op=str(op), inputs=(Input(0, _arg(operand)),), output=str(out), line=line, col=col)


def _side(tree: lark.Tree) -> list[PatternNode]:
    return [] if tree.data == "empty" else [_node(child) for child in tree.children]


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
        expected = sorted(getattr(error, "expected", None) or getattr(error, "allowed", None) or [])
        hint = f"; expected one of {', '.join(expected[:8])}" if expected else ""
        raise _error(path, error.line, error.column, f"{found}{hint}") from None
    doc = "\n".join(line[1:].strip() for line in text.splitlines() if line.startswith("#"))
    rule = Rule(id=Path(path).stem, path=path, doc=doc)
    seen: set[str] = set()
    for item in tree.children:
        key = str(item.children[0])
        if key in seen:
            raise _error(path, item.meta.line, item.meta.column, f"duplicate `{key}:`")
        seen.add(key)
        if item.data == "setting":
            setattr(rule, key if key != "rule" else "id", str(item.children[1]))
        else:
            source, target = _side(item.children[1]), _side(item.children[2])
            setattr(rule, f"{key}_source", source)
            setattr(rule, f"{key}_target", target)
    _check(rule)
    return rule


def _check(rule: Rule) -> None:
    """Type checks: names file, line and column of the first problem."""
    path = rule.path
    if not _RULE_ID.fullmatch(rule.id):
        raise _error(path, 1, 1, f"rule id {rule.id!r} must be letters, digits and `_` (it names the rule "
                                 "everywhere, and its file is `<id>.adopt`)")
    if rule.id != Path(path).stem:
        raise _error(path, 1, 1, f"rule id {rule.id!r} differs from its file name {Path(path).stem!r}")
    if rule.guards not in ("feasible", "equal"):
        raise _error(path, None, None, f"guards must be `feasible` or `equal`, not {rule.guards!r}")
    if rule.scope not in ("methods", "functions"):
        raise _error(path, None, None, f"scope must be `methods` or `functions`, not {rule.scope!r}")
    if rule.fallback not in ("none", "eager"):
        raise _error(path, None, None, f"fallback must be `none` or `eager`, not {rule.fallback!r}")
    if rule.anchor not in ("forward", "init"):
        raise _error(path, None, None, f"anchor must be `forward` or `init`, not {rule.anchor!r}")
    if not rule.forward_source:
        raise _error(path, None, None, "a rule needs a non-empty `forward:` source pattern")
    if rule.anchor == "init" and not rule.init_source:
        raise _error(path, None, None, "`anchor: init` needs an `init:` source pattern")
    init_vars: dict[str, PatternNode] = {}
    for node in rule.init_source:
        if node.kind != "layer" or node.callee.startswith("$"):
            raise _error(path, node.line, node.col, "an init node must construct a qualified type: `torch.nn.X(...) -> $name`")
        if node.output in init_vars:
            raise _error(path, node.line, node.col, f"{node.output} is bound twice in `init:`")
        init_vars[node.output] = node
    bound: set[str] = set()
    used_objects: set[str] = set()
    for node in rule.forward_source:
        if node.kind == "layer" and node.callee.startswith("$"):
            if node.callee not in init_vars:
                raise _error(path, node.line, node.col, f"{node.callee} is not bound by an `init:` node")
            used_objects.add(node.callee)
        if node.output is not None:
            if node.output in bound or node.output in init_vars:
                raise _error(path, node.line, node.col, f"{node.output} is bound twice")
            bound.add(node.output)
    for name, node in init_vars.items():
        if name not in used_objects:
            raise _error(path, node.line, node.col, f"init node {name} is not called in `forward:`")
    source_vars = bound | set(init_vars) | {i.arg.var for n in rule.forward_source + rule.init_source
                                            for i in n.inputs if i.arg.var}
    for node in rule.init_target + rule.forward_target:
        for var in [i.arg.var for i in node.inputs if i.arg.var] + ([node.callee] if node.callee and node.callee.startswith("$") else []):
            if var not in source_vars and not any(var == t.output for t in rule.init_target):
                raise _error(path, node.line, node.col, f"{var} in a target is not bound by the source patterns")


def load_rule(path: Path) -> Rule:
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        raise _error(str(path), None, None, f"cannot read rule: {error}") from None
    return parse_rule(text, str(path))
