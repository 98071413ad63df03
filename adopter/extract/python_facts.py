"""Python source -> fact rows (see `adopter/extract/schema.py`). No analysis happens here.

One `FactExtractor` walks one module with the standard-library `ast`. Every statement
and expression gets an integer id (unique within the file) and its position; the other
relations refer to those ids. Control flow is emitted as CFG edges between statements.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field
from pathlib import PurePath

from adopter.extract.axis_patterns import axis_rows
from adopter.extract.coverage import MODELLED_TYPES
from adopter.extract.mentions import quiet_runs
from adopter.extract.schema import RELATIONS
from adopter.records import LentCtor

_OPS = {
    ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.MatMult: "@", ast.Div: "/", ast.FloorDiv: "//",
    ast.Mod: "%", ast.Pow: "**", ast.LShift: "<<", ast.RShift: ">>", ast.BitOr: "|", ast.BitXor: "^",
    ast.BitAnd: "&", ast.USub: "-", ast.UAdd: "+", ast.Invert: "~", ast.Not: "not", ast.And: "and",
    ast.Or: "or", ast.Eq: "==", ast.NotEq: "!=", ast.Lt: "<", ast.LtE: "<=", ast.Gt: ">", ast.GtE: ">=",
    ast.Is: "is", ast.IsNot: "is not", ast.In: "in", ast.NotIn: "not in",
}
_CTX = {ast.Load: "load", ast.Store: "store", ast.Del: "del"}
_SHORT_TEXT = 80  # longer expressions get no expr_text (conditions always do)
# Only these kinds get expr_text (besides conditions): names and constants have it in
# `name`/`constant`, and calls and operators are DL nodes rendered from their own facts.
_TEXT_TYPES = frozenset({ast.Attribute, ast.Subscript, ast.UnaryOp, ast.Tuple, ast.List, ast.Starred, ast.Slice})
_WHITESPACE = re.compile(r"\s+")
_LINE_BREAK = re.compile(r"\r\n|\r|\n")
_KIND: dict[type, str] = {}  # expression kind names, by node type (`ast.Call` -> "call")
_TRY = (ast.Try, ast.TryStar) if hasattr(ast, "TryStar") else (ast.Try,)
_DEFS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
_COMPREHENSIONS = (ast.ListComp, ast.SetComp, ast.GeneratorExp, ast.DictComp)


@dataclass
class FileFacts:
    """The fact rows of one source file, keyed by relation name."""

    path: str
    rows: dict[str, list[tuple]] = field(default_factory=lambda: {name: [] for name in RELATIONS})
    # the constructions other files of the project lend this one, by their `import_attr` id
    # (negative): where they are, for the records (adopter/matches/project.py)
    lent: dict[int, LentCtor] = field(default_factory=dict)

    def count(self) -> int:
        return sum(len(r) for r in self.rows.values())


def resolve_relative(module: str, level: int, target: str | None) -> str:
    """`from ..x import y` inside `module` -> the absolute module of `x` (lexical only)."""
    if level == 0:
        return target or ""
    package = module.split(".")[:-1]
    base = package[: len(package) - (level - 1)] if level - 1 <= len(package) else []
    return ".".join(base + ([target] if target else []))


class FactExtractor:
    def __init__(self, source: str, path: str, module: str | None = None):
        self.source = source
        # lines as `ast` counts them: str.splitlines also breaks at form feeds and other separators
        self.lines = _LINE_BREAK.split(source)
        self.facts = FileFacts(path)
        self.module = module or PurePath(path).stem
        self._next_id = 0
        self._function = 0
        self._exit = 0
        self._loops: list[tuple[int, list]] = []  # (loop head, pending break edges)
        self._scopes: list[tuple[int, str]] = []  # nested scopes (id, kind) around the expression being emitted
        self._skippable = 0  # > 0 inside an operand of and/or after the first, or an arm of `a if c else b`
        self._raising: list[list[int]] = []  # per enclosing `try`: its statements whose exceptions it may catch
        self._rows = self.facts.rows
        self._expr_rows = self._rows["expr"]  # the largest relation: appended to directly

    # -- helpers -------------------------------------------------------------------
    def _id(self) -> int:
        self._next_id += 1
        return self._next_id

    def _emit(self, relation: str, *row) -> None:
        self._rows[relation].append(row)

    def _text(self, node: ast.AST) -> str:
        line, end = node.lineno - 1, node.end_lineno - 1
        if line == end:
            source = self.lines[line]
            if source.isascii():  # columns are byte offsets: in ASCII, character offsets too
                raw = source[node.col_offset:node.end_col_offset]
                if "  " not in raw and "\t" not in raw and "\x0b" not in raw and "\x0c" not in raw:
                    return raw.strip()  # no whitespace run to collapse
            else:
                raw = source.encode()[node.col_offset:node.end_col_offset].decode(errors="replace")
        else:
            chunks = [self.lines[line].encode()[node.col_offset:].decode(errors="replace")]
            chunks += self.lines[line + 1:end]
            chunks.append(self.lines[end].encode()[:node.end_col_offset].decode(errors="replace"))
            raw = "\n".join(chunks)
        return _WHITESPACE.sub(" ", raw).strip()

    @staticmethod
    def _pos(node: ast.AST) -> tuple[int, int, int, int]:
        return node.lineno, node.col_offset, node.end_lineno, node.end_col_offset

    # -- module level ----------------------------------------------------------------
    def extract(self, tree: ast.Module) -> FileFacts:
        self._emit("module", self.module)
        self._module_block(tree.body)
        self._rows["quiet_run"].extend(quiet_runs(self._rows))
        return self.facts

    def _module_block(self, body: list[ast.stmt]) -> None:
        for node in body:
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                self._import(node, self._plain_stmt(node, 0))
            elif isinstance(node, ast.ClassDef):
                self._class(node)
            elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                self._function_def(node, None)
            elif isinstance(node, (ast.Assign, ast.AnnAssign)) and node.value is not None:
                sid = self._plain_stmt(node, 0)
                value = self._expr(node.value, sid)
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                for target in targets:
                    if isinstance(target, ast.Name):
                        self._emit("module_assign", sid, target.id, value)
            else:
                # conditional imports and definitions (`if`, `try`, `with`, `match`...): every block may bind names
                for block in (getattr(node, "body", []), getattr(node, "orelse", []), getattr(node, "finalbody", [])):
                    self._module_block(block)
                for handler in getattr(node, "handlers", ()) or getattr(node, "cases", ()):
                    self._module_block(handler.body)

    def _plain_stmt(self, node: ast.stmt, function: int) -> int:
        sid = self._id()
        self._emit("stmt", sid, function, type(node).__name__.lower(), *self._pos(node))
        return sid

    def _stmt(self, kind: str, pos: tuple, parent: int, branch: str, index: int) -> int:
        """A CFG node of the current function: a statement, or an `except` handler, a `case`, a case guard."""
        sid = self._id()
        self._emit("stmt", sid, self._function, kind, *pos)
        self._emit("stmt_block", sid, parent, branch, index)
        for statements in self._raising:  # an exception here may reach each enclosing `try`'s handlers
            statements.append(sid)
        return sid

    def _import(self, node: ast.Import | ast.ImportFrom, sid: int) -> None:
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.asname:
                    self._emit("import_binding", sid, alias.asname, alias.name)
                else:
                    top = alias.name.split(".")[0]
                    self._emit("import_binding", sid, top, top)
            return
        base = resolve_relative(self.module, node.level, node.module)
        for alias in node.names:
            if alias.name != "*":
                qname = f"{base}.{alias.name}" if base else alias.name
                self._emit("import_binding", sid, alias.asname or alias.name, qname)

    def _class(self, node: ast.ClassDef) -> None:
        cid = self._id()
        self._emit("class_def", cid, node.name, *self._pos(node))
        for index, base in enumerate(node.bases):
            self._emit("class_base", cid, index, self._expr(base, cid))
        for item in node.body:
            if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)):
                self._function_def(item, cid)
            elif isinstance(item, ast.ClassDef):
                self._class(item)
            elif isinstance(item, (ast.Assign, ast.AnnAssign)) and isinstance(item.value, (ast.Name, ast.Attribute)):
                # only names: the analyses read class attributes that name a class
                # (`_default_processor_cls = AttnProcessor`), and the many lists and strings of
                # a class body would cost every file facts no analysis reads
                targets = item.targets if isinstance(item, ast.Assign) else [item.target]
                names = [target.id for target in targets if isinstance(target, ast.Name)]
                if names:
                    value = self._expr(item.value, self._plain_stmt(item, 0))
                    for name in names:
                        self._emit("class_assign", cid, name, value)

    # -- functions and statements ----------------------------------------------------------
    def _function_def(self, node: ast.FunctionDef | ast.AsyncFunctionDef, class_id: int | None,
                      defined_at: int | None = None) -> None:
        """A method (`class_id`), a module-level function, or a function defined by the def
        statement `defined_at` inside another function."""
        fid, exit_id = self._id(), self._id()
        self._emit("function_def", fid, node.name, *self._pos(node))
        if class_id is not None:
            self._emit("function_class", fid, class_id)
        if defined_at is not None:
            self._emit("nested_function", fid, defined_at)
        self._emit("function_exit", fid, exit_id)
        positional = node.args.posonlyargs + node.args.args
        for index, arg in enumerate(positional):
            self._emit("param", fid, index, arg.arg)
        for arg in node.args.kwonlyargs:
            self._emit("kwonly_param", fid, arg.arg)
        # (evaluated where the def stands: held by the function id, which is no statement, so
        # their names resolve as globals)
        defaults = [*zip(positional[len(positional) - len(node.args.defaults):], node.args.defaults),
                    *((arg, d) for arg, d in zip(node.args.kwonlyargs, node.args.kw_defaults) if d is not None)]
        if defined_at is None:  # (a nested def's defaults and decorators are reads at its def statement)
            for arg, default in defaults:
                self._emit("param_default", fid, arg.arg, self._expr(default, fid))
            for index, decorator in enumerate(node.decorator_list):
                self._emit("function_decorator", fid, index, self._expr(decorator, fid))
        outer = (self._function, self._exit, self._loops, self._raising, self._scopes)
        self._function, self._exit, self._loops, self._raising, self._scopes = fid, exit_id, [], [], []
        for pending, label in self._block(node.body, fid, "body", [(fid, "next")]):
            self._emit("cfg_edge", fid, pending, exit_id, label)
        self._function, self._exit, self._loops, self._raising, self._scopes = outer

    def _edge(self, source: int, target: int, label: str) -> None:
        self._emit("cfg_edge", self._function, source, target, label)

    def _block(self, body: list[ast.stmt], parent: int, branch: str, preds: list, start: int = 0) -> list:
        """Emit a block; `preds` are dangling (source, label) edges into it; returns its exits."""
        for index, node in enumerate(body, start):
            sid = self._stmt(type(node).__name__.lower(), self._pos(node), parent, branch, index)
            for source, label in preds:
                self._edge(source, sid, label)
            preds = self._statement(node, sid, preds)
        return preds

    def _statement(self, node: ast.stmt, sid: int, preds: list) -> list:
        """Emit the facts of one statement (`preds`: the edges into it); return its dangling outgoing edges."""
        if isinstance(node, ast.If):
            self._emit("if_test", sid, self._expr(node.test, sid, always_text=True))
            exits = self._block(node.body, sid, "body", [(sid, "true")])
            if node.orelse:
                return exits + self._block(node.orelse, sid, "orelse", [(sid, "false")])
            return exits + [(sid, "false")]
        if isinstance(node, (ast.For, ast.AsyncFor, ast.While)):
            if isinstance(node, ast.While):
                self._emit("while_test", sid, self._expr(node.test, sid, always_text=True))
            else:
                iterable = self._expr(node.iter, sid)
                self._emit("for_loop", sid, self._expr(node.target, sid), iterable)
            self._loops.append((sid, []))
            for source, label in self._block(node.body, sid, "body", [(sid, "true")]):
                self._edge(source, sid, "loop")
            _, breaks = self._loops.pop()
            exits = [(sid, "false")]
            if not isinstance(node, ast.While):  # over an empty iterable the target keeps its value
                exits += [(source, "bypass") for source, _ in preds]
            if node.orelse:
                exits = self._block(node.orelse, sid, "orelse", exits)
            return exits + breaks
        if isinstance(node, (ast.With, ast.AsyncWith)):
            for item in node.items:
                context = self._expr(item.context_expr, sid)
                target = self._expr(item.optional_vars, sid) if item.optional_vars else 0
                self._emit("with_item", sid, context, target)
            return self._block(node.body, sid, "body", [(sid, "next")])
        if isinstance(node, _TRY):
            return self._try(node, sid)
        if isinstance(node, ast.Match):
            return self._match(node, sid)
        if isinstance(node, (ast.Return, ast.Raise)):
            if isinstance(node, ast.Return) and node.value is not None:
                self._emit("return_value", sid, self._expr(node.value, sid))
            elif isinstance(node, ast.Raise):
                for part in (node.exc, node.cause):
                    if part is not None:
                        self._expr(part, sid)
            self._edge(sid, self._exit, "exit")
            return []
        if isinstance(node, ast.Break):
            self._loops[-1][1].append((sid, "break")) if self._loops else None
            return []
        if isinstance(node, ast.Continue):
            if self._loops:
                self._edge(sid, self._loops[-1][0], "loop")
            return []
        self._simple_statement(node, sid)
        return [(sid, "next")]

    def _simple_statement(self, node: ast.stmt, sid: int) -> None:
        if isinstance(node, ast.Assign):
            value = self._expr(node.value, sid)
            for target in node.targets:
                self._emit("assign", sid, self._expr(target, sid), value)
        elif isinstance(node, ast.AnnAssign):
            if node.value is not None:
                value = self._expr(node.value, sid)
                self._emit("assign", sid, self._expr(node.target, sid), value)
        elif isinstance(node, ast.AugAssign):
            # `x += y` is emitted as `x = x + y`: a load of the target, a binop, a store
            value = self._expr(node.value, sid)
            load = self._expr(node.target, sid, force_load=True)
            binop = self._id()
            self._emit("expr", binop, sid, "binop", *self._pos(node))
            self._emit("binop", binop, _OPS[type(node.op)], load, value)
            self._emit("assign", sid, self._expr(node.target, sid), binop)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            self._import(node, sid)
        elif isinstance(node, _DEFS):
            self._nested_definition(node, sid)
        else:
            if type(node) not in MODELLED_TYPES:  # `global`, `nonlocal`, or a newer Python's statement
                self._emit("unmodelled", sid, type(node).__name__.lower(), node.lineno)
            for child in ast.iter_child_nodes(node):
                if isinstance(child, ast.expr):
                    self._expr(child, sid)

    def _try(self, node: ast.Try, sid: int) -> list:
        """`try`/`try*`: each handler is a CFG node that the try statement and every statement of
        its body (at any depth) lead to, since any of them may raise; `finally` is reached from
        every statement before it, as well as from the normal exits."""
        before_finally: list[int] = [sid]
        if node.finalbody:
            self._raising.append(before_finally)
        in_body: list[int] = [sid]
        self._raising.append(in_body)
        exits = self._block(node.body, sid, "body", [(sid, "next")])
        self._raising.pop()
        if node.orelse:
            exits = self._block(node.orelse, sid, "orelse", exits)
        for index, handler in enumerate(node.handlers):
            end = handler.body[-1]
            hid = self._stmt("excepthandler", (handler.lineno, handler.col_offset, end.end_lineno, end.end_col_offset),
                             sid, "handlers", index)
            for source in in_body:
                self._edge(source, hid, "except")
            if handler.type is not None:
                self._expr(handler.type, hid)
            if handler.name:
                self._emit("stmt_binding", hid, handler.name)
            exits += self._block(handler.body, hid, "body", [(hid, "next")])
        if node.finalbody:
            self._raising.pop()
            exits = self._block(node.finalbody, sid, "finalbody", exits + [(s, "except") for s in before_finally])
        return exits

    def _match(self, node: ast.Match, sid: int) -> list:
        """`match`: each case is a CFG node (its pattern: captures and values read), with the
        guard a node of its own after it (it sees the captures); a case that does not match
        falls through to the next, and an irrefutable one ends the fall-through. Bypass edges
        around a case let the earlier values of its captures pass it."""
        self._emit("match_subject", sid, self._expr(node.subject, sid, always_text=True))
        exits: list = []
        preds = [(sid, "next")]
        for index, case in enumerate(node.cases):
            pattern, end = case.pattern, case.body[-1]
            cid = self._stmt("match_case", (pattern.lineno, pattern.col_offset, end.end_lineno, end.end_col_offset),
                             sid, "cases", index)
            for source, label in preds:
                self._edge(source, cid, label)
            entry_preds = preds
            test = self._text(pattern) + (f" if {self._text(case.guard)}" if case.guard is not None else "")
            self._emit("case_test", cid, test)
            self._pattern(pattern, cid)
            entry, preds = cid, [(cid, "false")]
            if case.guard is not None:
                entry = self._stmt("guard", self._pos(case.guard), cid, "guard", 0)
                self._edge(cid, entry, "true")
                self._expr(case.guard, entry)
                preds.append((entry, "false"))
            elif _irrefutable(pattern):
                self._emit("irrefutable_case", cid)
                preds, entry_preds = [], []
            exits += self._block(case.body, cid, "body", [(entry, "true")])
            # a case that does not match may have bound some of its captures, or none
            preds += [(source, "bypass") for source, _ in entry_preds]
        return exits + preds

    def _pattern(self, pattern: ast.pattern, cid: int) -> None:
        """A pattern's captures (definitions of the case) and the expressions it evaluates."""
        t = type(pattern)
        if t is ast.MatchValue:
            self._expr(pattern.value, cid)
        elif t is ast.MatchClass:
            self._expr(pattern.cls, cid)
        elif t is ast.MatchMapping:
            for key in pattern.keys:
                self._expr(key, cid)
        elif t not in MODELLED_TYPES:
            self._emit("unmodelled", cid, t.__name__.lower(), pattern.lineno)
        name = getattr(pattern, "name", None) or getattr(pattern, "rest", None)
        if name:
            self._emit("stmt_binding", cid, name)
        for child in ast.iter_child_nodes(pattern):
            if isinstance(child, ast.pattern):
                self._pattern(child, cid)

    # -- nested scopes ------------------------------------------------------------------------
    def _enter_scope(self, scope: int, kind: str) -> None:
        # the parent is the nearest enclosing scope whose names this one sees: not a class
        parent = next((outer for outer, outer_kind in reversed(self._scopes) if outer_kind != "class"), 0)
        self._emit("nested_scope", scope, parent, kind)
        self._scopes.append((scope, kind))

    def _nested_definition(self, node: ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef, sid: int) -> None:
        """A def or class inside a function binds its name; what it evaluates when defined is read
        there; of its body, which runs later (a class body: now, in its own scope), only the
        names are emitted: the calls there are not the function's DL nodes."""
        self._emit("stmt_binding", sid, node.name)
        for expr in _definition_exprs(node):
            self._expr(expr, sid)
        self._nested_body(sid, node, sid)
        if type(node) is not ast.ClassDef:
            # and its body once more, as a function of its own that a call of its name runs
            self._function_def(node, None, defined_at=sid)

    def _nested_body(self, scope: int, node: ast.AST, sid: int) -> None:
        kind = "class" if type(node) is ast.ClassDef else "function"  # a lambda is a function
        self._enter_scope(scope, kind)
        if kind != "class":
            args = node.args
            for arg in (*args.posonlyargs, *args.args, args.vararg, *args.kwonlyargs, args.kwarg):
                if arg is not None:
                    self._emit("scope_param", scope, arg.arg)
        for part in (node.body if type(node) is not ast.Lambda else [node.body]):
            self._scope_names(part, sid)
        self._scopes.pop()

    def _scope_names(self, node: ast.AST, sid: int) -> None:
        """The name expressions under `node`, in a nested scope: each one's innermost scope is
        recorded, and scopes nested deeper get their own."""
        t = type(node)
        if t is ast.Name:
            self._expr(node, sid)
        elif t in _DEFS or t is ast.Lambda:
            for expr in _definition_exprs(node):
                self._scope_names(expr, sid)
            self._nested_body(self._id(), node, sid)
        elif t in _COMPREHENSIONS:
            self._scope_names(node.generators[0].iter, sid)  # evaluated in the enclosing scope
            self._enter_scope(self._id(), "comprehension")
            for part in _comprehension_parts(node):
                self._scope_names(part, sid)
            self._scopes.pop()
        elif t is ast.NamedExpr:
            self._scope_names(node.value, sid)
            scopes = self._scopes
            self._scopes = _binding_scopes(scopes)
            self._scope_names(node.target, sid)
            self._scopes = scopes
        else:
            if t is ast.Global or t is ast.Nonlocal:  # rebinds a name outside the nested scope
                self._emit("unmodelled", sid, t.__name__.lower(), node.lineno)
            for child in ast.iter_child_nodes(node):
                self._scope_names(child, sid)

    # -- expressions -----------------------------------------------------------------
    def _expr(self, node: ast.expr, sid: int, always_text: bool = False, force_load: bool = False) -> int:
        # the hot path of extraction (every expression of a file): branches test the node's
        # type by identity, most frequent first, and rows are appended to their lists directly
        self._next_id += 1
        eid = self._next_id
        t = type(node)
        rows = self._rows
        self._expr_rows.append((eid, sid, _KIND.get(t) or _KIND.setdefault(t, t.__name__.lower()),
                                node.lineno, node.col_offset, node.end_lineno, node.end_col_offset))
        if always_text or (t in _TEXT_TYPES and node.end_lineno == node.lineno
                           and node.end_col_offset - node.col_offset <= _SHORT_TEXT):
            rows["expr_text"].append((eid, self._text(node)))
        sub = self._expr
        if t is ast.Name:
            rows["name"].append((eid, node.id, "load" if force_load else _CTX[type(node.ctx)]))
            if self._scopes:
                rows["name_scope"].append((eid, self._scopes[-1][0]))
        elif t is ast.Attribute:
            rows["attribute"].append((eid, sub(node.value, sid), node.attr))
        elif t is ast.Call:
            rows["call"].append((eid, sub(node.func, sid)))
            for index, arg in enumerate(node.args):
                rows["call_arg"].append((eid, index, sub(arg, sid)))
            for keyword in node.keywords:
                rows["call_kwarg"].append((eid, keyword.arg or "**", sub(keyword.value, sid)))
        elif t is ast.Constant:
            rows["constant"].append((eid, repr(node.value)))
            if type(node.value) is str and "->" in node.value:
                rows["pattern_axis"].extend((eid, *row) for row in axis_rows(node.value))
        elif t is ast.Subscript:
            rows["subscript"].append((eid, sub(node.value, sid), sub(node.slice, sid)))
        elif t is ast.BinOp:
            rows["binop"].append((eid, _OPS[type(node.op)], sub(node.left, sid), sub(node.right, sid)))
        elif t is ast.UnaryOp:
            operand = sub(node.operand, sid, always_text=always_text and type(node.op) is ast.Not)
            rows["unaryop"].append((eid, _OPS[type(node.op)], operand))
            if type(node.op) is ast.USub and type(node.operand) is ast.Constant \
                    and isinstance(node.operand.value, (int, float)) and not isinstance(node.operand.value, bool):
                rows["constant"].append((eid, repr(-node.operand.value)))  # `-1` is a constant
        elif t is ast.Tuple or t is ast.List or t is ast.Set:
            for index, elem in enumerate(node.elts):
                rows["element"].append((eid, index, sub(elem, sid, force_load=force_load)))
        elif t is ast.BoolOp:
            for index, value in enumerate(node.values):
                self._skippable += index == 1  # the operands after the first may not run
                # a condition's operands carry their text too: a guarded rewrite decides an
                # `if` whose test combines literals it knows
                rows["boolop"].append((eid, _OPS[type(node.op)], index, sub(value, sid, always_text=always_text)))
            self._skippable -= len(node.values) > 1
        elif t is ast.Compare:
            rows["compare"].append((eid, _OPS[type(node.ops[0])], sub(node.left, sid), sub(node.comparators[0], sid)))
            for comparator in node.comparators[1:]:
                sub(comparator, sid)
        elif t is ast.IfExp:
            test = sub(node.test, sid, always_text=True)
            self._skippable += 1
            rows["ifexp"].append((eid, test, sub(node.body, sid), sub(node.orelse, sid)))
            self._skippable -= 1
        elif t is ast.Dict:
            for index, (key, value) in enumerate(zip(node.keys, node.values)):
                rows["dict_item"].append((eid, index, sub(key, sid) if key is not None else 0, sub(value, sid)))
        elif t is ast.ListComp or t is ast.SetComp or t is ast.GeneratorExp or t is ast.DictComp:
            iterable = sub(node.generators[0].iter, sid)  # evaluated in the enclosing scope
            self._enter_scope(eid, "comprehension")
            parts = _comprehension_parts(node)
            if t is ast.DictComp:
                for part in parts:
                    sub(part, sid)
            else:
                rows["comprehension"].append((eid, sub(next(parts), sid), iterable))
                rows["comprehension_target"].append((eid, sub(next(parts), sid)))  # (parts yield it next)
                for part in parts:
                    sub(part, sid)
            self._scopes.pop()
        elif t is ast.Starred:
            rows["starred"].append((eid, sub(node.value, sid)))
        elif t is ast.NamedExpr:
            value = sub(node.value, sid)
            scopes = self._scopes
            self._scopes = _binding_scopes(scopes)  # a walrus in a comprehension binds outside it
            rows["named_expr"].append((eid, sub(node.target, sid), value))
            self._scopes = scopes
            if self._skippable or scopes:  # (at function level, the only scopes are comprehensions)
                rows["walrus_may_skip"].append((eid,))
        elif t is ast.Slice:
            # its bounds in field order, as the generic walk below visits them (ids unchanged)
            for part in ("lower", "upper", "step"):
                bound = getattr(node, part)
                if bound is not None:
                    rows["slice_bound"].append((eid, part, sub(bound, sid)))
        elif t is ast.Lambda:
            for default in _definition_exprs(node):
                sub(default, sid)
            self._nested_body(eid, node, sid)
        else:
            if t not in MODELLED_TYPES:  # a newer Python's expression
                rows["unmodelled"].append((sid, _KIND[t], node.lineno))
            for child in ast.iter_child_nodes(node):
                if isinstance(child, ast.expr):
                    sub(child, sid)
        return eid


def _irrefutable(pattern: ast.pattern) -> bool:
    """PEP 634's irrefutable patterns: a capture or wildcard, alone, under `as`, or in an `|`."""
    if type(pattern) is ast.MatchAs:
        return pattern.pattern is None or _irrefutable(pattern.pattern)
    if type(pattern) is ast.MatchOr:
        return any(_irrefutable(p) for p in pattern.patterns)
    return False


def _definition_exprs(node: ast.AST) -> list[ast.expr]:
    """What a def, class or lambda evaluates where it stands: decorators, defaults, annotations, bases."""
    if type(node) is ast.ClassDef:
        return [*node.decorator_list, *node.bases, *(k.value for k in node.keywords)]
    args = node.args
    found = [*args.defaults, *(d for d in args.kw_defaults if d is not None)]
    if type(node) is not ast.Lambda:
        found += node.decorator_list
        found += [a.annotation for a in (*args.posonlyargs, *args.args, args.vararg, *args.kwonlyargs, args.kwarg)
                  if a is not None and a.annotation is not None]
        if node.returns is not None:
            found.append(node.returns)
    return found


def _comprehension_parts(node: ast.AST):
    """A comprehension's expressions in its own scope, in extraction order: element (key and
    value), each generator's target and conditions, the later generators' iterables."""
    yield from ((node.key, node.value) if type(node) is ast.DictComp else (node.elt,))
    for generator in node.generators:
        yield generator.target
        yield from generator.ifs
    for generator in node.generators[1:]:
        yield generator.iter


def _binding_scopes(scopes: list[tuple[int, str]]) -> list[tuple[int, str]]:
    """The scopes a walrus binds in: the nearest enclosing one that is not a comprehension."""
    end = len(scopes)
    while end and scopes[end - 1][1] == "comprehension":
        end -= 1
    return scopes[:end]


def extract_source(source: str, path: str, module: str | None = None) -> FileFacts:
    """Facts of one module's source text. Raises SyntaxError / ValueError on bad input."""
    tree = ast.parse(source, filename=path)
    return FactExtractor(source, path, module).extract(tree)
