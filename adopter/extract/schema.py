"""Every relation the extractor emits: name, columns, and a one-line meaning.

This table is the contract between `adopter/extract/` and `adopter/datalog/schema/facts.lp`; a test
checks that the two agree both ways. Ids are integers unique within one file; a fact
table written to disk prepends a `file` column so several files fit in one table.
Positions are 1-based lines and 0-based columns, as Python's `ast` reports them.
"""

from __future__ import annotations

from itertools import chain

RELATIONS: dict[str, tuple[tuple[str, ...], str]] = {
    # module level
    "module": (("module",), "the module's qualified name"),
    "import_binding": (("stmt", "alias", "qname"),
                       "an import binds local name `alias` to qualified name `qname` (relative imports resolved lexically)"),
    "module_assign": (("stmt", "name", "value"), "module-level `name = value` (value is an expression id)"),
    "class_def": (("class", "name", "line", "col", "end_line", "end_col"), "a class definition"),
    "class_base": (("class", "index", "base"), "the base expression at `index` of a class"),
    "class_assign": (("class", "name", "value"), "`name = value` in a class body (value is an expression id)"),
    "function_def": (("function", "name", "line", "col", "end_line", "end_col"), "a function or method definition"),
    "function_class": (("function", "class"), "the function is a method defined directly in `class`"),
    "function_exit": (("function", "exit"), "the CFG exit node of a function (its entry node is the function id)"),
    "param": (("function", "index", "name"), "positional parameter `index` of a function (self included)"),
    "kwonly_param": (("function", "name"), "keyword-only parameter of a function"),
    "param_default": (("function", "name", "value"), "the default value (an expression) of a method's or module-level function's parameter"),
    "function_decorator": (("function", "index", "value"),
                           "decorator `index` (from 0, top first) of a method or module-level function (value: an expression, evaluated where the def stands)"),
    # statements and control flow
    "stmt": (("stmt", "function", "kind", "line", "col", "end_line", "end_col"),
             "a statement inside a function (function 0: module level); also each `except` handler (excepthandler), `case` (match_case) and case guard (guard)"),
    "stmt_block": (("stmt", "parent", "branch", "index"),
                   "the statement is number `index` of block `branch` (body/orelse/handlers/finalbody/cases/guard) of `parent` (a statement or function)"),
    "cfg_edge": (("function", "source", "target", "label"), "control may pass from `source` to `target` (label: next/true/false/loop/exit/except; bypass: around a `for` over an empty iterable, or a `case` that does not match, whose definitions may not happen)"),
    "quiet_run": (("stmt", "name", "target"),
                  "a syntactic index: in a block run in order (body/orelse/finalbody), the siblings from `stmt` up to `target` (exclusive) write no name `name`, `target` does, and `stmt` is the block's first statement or follows one that does"),
    "if_test": (("stmt", "test"), "the condition of an `if` statement"),
    "while_test": (("stmt", "test"), "the condition of a `while` loop"),
    "for_loop": (("stmt", "target", "iter"), "`for target in iter`"),
    "with_item": (("stmt", "context", "target"), "`with context as target` (target 0 when absent)"),
    "assign": (("stmt", "target", "value"), "`target = value` (one row per target; `x += y` is emitted as `x = x + y`)"),
    "return_value": (("stmt", "value"), "`return value`"),
    "stmt_binding": (("stmt", "name"),
                     "the statement binds a name that is no name expression: a nested def or class, an `except ... as` name, a `case` capture"),
    "match_subject": (("stmt", "subject"), "the subject of a `match` statement"),
    "case_test": (("stmt", "text"),
                  "a `case` (a statement of kind match_case in block `cases` of its match; its guard a statement of kind guard in it) and its pattern's source text, with ` if <guard>` when it has one"),
    "irrefutable_case": (("stmt",), "a `case` with no guard whose pattern always matches (`case _:`): no later case runs"),
    "unmodelled": (("stmt", "kind", "line"),
                   "the statement holds, at `line`, a construct the extractor does not model (kind: its ast class, lower case; adopter/extract/coverage.py)"),
    # expressions
    "expr": (("expr", "stmt", "kind", "line", "col", "end_line", "end_col"), "an expression and the statement holding it"),
    "expr_text": (("expr", "text"), "source text of every condition (and of its `and`/`or`/`not` operands) and of short attributes, subscripts, tuples, unary operations"),
    "name": (("expr", "id", "ctx"), "a name expression (ctx: load/store/del)"),
    "attribute": (("expr", "base", "attr"), "`base.attr`"),
    "subscript": (("expr", "base", "index"), "`base[index]`"),
    "constant": (("expr", "repr"), "a literal, as its Python repr (`-1` for a negated number)"),
    "call": (("expr", "callee"), "a call expression"),
    "call_arg": (("call", "index", "arg"), "positional argument `index` of a call"),
    "call_kwarg": (("call", "keyword", "arg"), "keyword argument of a call (`**` for `**kwargs`)"),
    "binop": (("expr", "op", "left", "right"), "a binary operation, op as its symbol"),
    "unaryop": (("expr", "op", "operand"), "a unary operation (`-`, `+`, `~`, `not`)"),
    "boolop": (("expr", "op", "index", "value"), "operand `index` of an `and`/`or`"),
    "compare": (("expr", "op", "left", "right"), "a comparison (only the first operator of a chain)"),
    "ifexp": (("expr", "test", "body", "orelse"), "`body if test else orelse`"),
    "pattern_axis": (("expr", "side", "dim", "member", "axis"),
                     "a string literal in einops' axis notation, `'... (d r) -> ... d r'` (adopter/extract/axis_patterns.py): on side `side` (in/out), dimension `dim` (counted from the last, -1) holds axis `axis` (`...` for the leading dimensions) as member `member` of a parenthesised group (0, 1, ...), or alone (-1)"),
    "element": (("expr", "index", "elem"), "element of a tuple, list or set literal"),
    "slice_bound": (("expr", "part", "bound"), "a bound of a slice `lower:upper:step` (part: lower/upper/step; absent bounds have no row)"),
    "dict_item": (("expr", "index", "key", "value"), "item of a dict literal (key 0 for `**`)"),
    "comprehension": (("expr", "elt", "iter"), "a list/set/generator comprehension's element and first iterable"),
    "comprehension_target": (("expr", "target"), "the target of a list/set/generator comprehension's first `for`"),
    "starred": (("expr", "value"), "`*value`"),
    "named_expr": (("expr", "target", "value"), "`(target := value)`: the statement stores the target; the expression evaluates to the value"),
    "walrus_may_skip": (("expr",), "a walrus that may not run when its statement does: after the first operand of and/or, in an arm of `a if c else b`, in a comprehension"),
    # nested scopes inside a function: their names are emitted, not their calls
    "nested_scope": (("scope", "parent", "kind"),
                     "a comprehension, function (def or lambda) or class scope inside a function; `parent` is the nearest enclosing scope that is not a class (0: the function itself), as a class body's names are not visible in the scopes nested in it"),
    "name_scope": (("expr", "scope"), "a name expression inside a nested scope (the innermost)"),
    "scope_param": (("scope", "name"), "a parameter of a nested function or lambda"),
    "nested_function": (("function", "stmt"),
                        "a function defined by a def statement inside another function: its body is emitted twice, as names of the nested scope `stmt` and as a function of its own"),
    # the project: not from the file's source but from the analyses of the run's other files
    # (adopter/matches/project.py); the extractor leaves it empty
    "import_attr": (("ctor", "qname", "attr", "type"),
                    "every instance of class `qname`, which another file of the project defines, has `self.attr`, which construction `ctor` (a negative id: its place is in that file) may have built as a `type`"),
    "used_elsewhere": (("qname",), "another file of the project imports `qname`, a module-level function of this file or a table of them"),
}


# Relations the extractor leaves empty: the run fills them from other files' analyses
NOT_EXTRACTED = frozenset({"import_attr", "used_elsewhere"})


# Columns holding integers (ids, positions, indexes); every other column is text.
INT_COLUMNS = frozenset({
    "stmt", "class", "function", "exit", "index", "line", "col", "end_line", "end_col", "base",
    "parent", "source", "target", "test", "iter", "context", "value", "expr", "callee", "call",
    "arg", "left", "right", "operand", "body", "orelse", "elem", "key", "elt", "subject", "scope", "bound",
    "dim", "member", "ctor",
})


# Text columns that may hold any character (source text, literals, names built from file
# paths); every other text column holds an identifier or a fixed word, which never needs
# escaping in clingo's string syntax.
FREE_TEXT_COLUMNS = frozenset({"repr", "text", "module", "qname", "type"})
# ... and where they sit in each relation's rows (fact terms and fact tables quote only these)
FREE_TEXT_POSITIONS = {relation: tuple(i for i, c in enumerate(cols) if c in FREE_TEXT_COLUMNS)
                       for relation, (cols, _) in RELATIONS.items()}


def flat_fields(relation: str, rows: list[tuple], convert_column) -> tuple:
    """Every field of `rows`, row after row, in one tuple, with each free-text column
    converted at once (`convert_column`: the column's values in, converted values out):
    both renderings of the facts format this tuple with one `%` and quote only these.

    Why by column: converting field by field costs a copy of every row and a call per
    field, a large part of rendering a file's facts as clingo terms."""
    positions = FREE_TEXT_POSITIONS[relation]
    if not positions:
        return tuple(chain.from_iterable(rows))
    flat = list(chain.from_iterable(rows))
    width = len(RELATIONS[relation][0])
    for i in positions:
        flat[i::width] = convert_column(flat[i::width])
    return tuple(flat)


def columns(relation: str) -> tuple[str, ...]:
    return RELATIONS[relation][0]
