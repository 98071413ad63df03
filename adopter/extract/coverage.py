"""How the extractor handles every statement, expression and pattern kind of Python's `ast`.

One entry per `ast` class name: (handling, how). Handling is one of
  "modelled"  the facts and the CFG hold its definitions, reads and control flow;
  "reported"  not modelled: the extractor emits `unmodelled(Stmt, Kind, Line)` for it, and
              no rule matches in a function that holds one (the scan warns);
  "absent"    `ast.parse` never produces it (a deprecated alias of `Constant`).
The extractor reports any kind this table does not list (a newer Python's node) like a
"reported" one, and tests/extract/test_coverage.py fails until the table lists every kind of the
running Python. docs/analysis-coverage.md explains the choices.
"""

from __future__ import annotations

import ast

MODELLED, REPORTED, ABSENT = "modelled", "reported", "absent"

_NESTED = ("inside a function: binds its name; decorators, defaults and annotations are reads at "
           "the statement; every name its body loads and does not bind is a read at the statement, "
           "of any definition in the function (it may be called later)")

STATEMENTS: dict[str, tuple[str, str]] = {
    "FunctionDef": (MODELLED, "a method or module-level function has its own CFG; " + _NESTED
                    + "; a def's body is also a function with its own CFG, run where its name is called"),
    "AsyncFunctionDef": (MODELLED, "as FunctionDef"),
    "ClassDef": (MODELLED, "classes and their methods; " + _NESTED + " (the body runs at once; its calls are no DL nodes)"),
    "Return": (MODELLED, "value read; edge to the exit"),
    "Delete": (MODELLED, "`del x` reads x (the patched code must still define it); `del a.b`, `del a[i]` read a"),
    "Assign": (MODELLED, "every name stored in a target (nested, starred) is a definition; values flow "
                         "through plain and flat-tuple targets"),
    "AugAssign": (MODELLED, "`t op= v` is `t = t op v`; attribute and subscript targets read their base"),
    "AnnAssign": (MODELLED, "with a value, as Assign; without one nothing runs (a local annotation "
                            "is not evaluated)"),
    "For": (MODELLED, "loop head with a back edge, else block, break and continue; target names are definitions"),
    "AsyncFor": (MODELLED, "as For"),
    "While": (MODELLED, "loop head with its test as a guard literal, back edge, else block"),
    "If": (MODELLED, "branches with the test as a guard literal (also after an early return)"),
    "With": (MODELLED, "items in order; each target (nested too) a definition, seen by the body "
                       "(a context manager is assumed not to swallow exceptions)"),
    "AsyncWith": (MODELLED, "as With"),
    "Match": (MODELLED, "subject read; each case a branch (captures are definitions, the guard a "
                        "statement of its own, one guard literal per refutable case); an irrefutable "
                        "case ends the fall-through"),
    "Raise": (MODELLED, "exception and cause read; edge to the exit and to enclosing handlers"),
    "Try": (MODELLED, "handlers reachable from the try and from every statement of its body; "
                      "`as` names are definitions; else; finally reachable from every statement before it"),
    "TryStar": (MODELLED, "as Try"),
    "Assert": (MODELLED, "test and message read"),
    "Import": (MODELLED, "bindings (module level: qualified names; in a function: also definitions)"),
    "ImportFrom": (MODELLED, "as Import, relative modules resolved lexically"),
    "Global": (REPORTED, "assignments to the name leave the function"),
    "Nonlocal": (REPORTED, "assignments to the name rebind the enclosing function's variable"),
    "Expr": (MODELLED, "its expression"),
    "Pass": (MODELLED, "a CFG node"),
    "Break": (MODELLED, "edge past the loop's else"),
    "Continue": (MODELLED, "edge to the loop head"),
}

_COMPREHENSION = ("a scope of its own: its targets are not the function's variables and loads of "
                  "them see no definition of the function; the first iterable runs outside; its "
                  "calls are DL nodes of the statement")

EXPRESSIONS: dict[str, tuple[str, str]] = {
    "BoolOp": (MODELLED, "operands"), "BinOp": (MODELLED, "operator, a DL node on tensors"),
    "UnaryOp": (MODELLED, "operator, a DL node on tensors"),
    "Compare": (MODELLED, "first operator as a fact, every operand read"),
    "Call": (MODELLED, "callee, positional and keyword arguments"),
    "Attribute": (MODELLED, "base and attribute"), "Subscript": (MODELLED, "base and index"),
    "Name": (MODELLED, "load, store or del (a del is a read)"), "Constant": (MODELLED, "its repr"),
    "IfExp": (MODELLED, "test as a guard literal of each arm's reads"),
    "Dict": (MODELLED, "items"), "Set": (MODELLED, "elements"), "List": (MODELLED, "elements"),
    "Tuple": (MODELLED, "elements"), "Starred": (MODELLED, "its value (also as a target)"),
    "Slice": (MODELLED, "bounds read"),
    "NamedExpr": (MODELLED, "its target is a definition of the statement, seen by the expressions "
                            "after it there; the expression holds the value"),
    "Lambda": (MODELLED, "defaults read; its body as a nested function's"),
    "ListComp": (MODELLED, _COMPREHENSION), "SetComp": (MODELLED, _COMPREHENSION),
    "GeneratorExp": (MODELLED, _COMPREHENSION), "DictComp": (MODELLED, _COMPREHENSION),
    "Await": (MODELLED, "its value"), "Yield": (MODELLED, "its value"), "YieldFrom": (MODELLED, "its value"),
    "FormattedValue": (MODELLED, "value and format spec read"), "JoinedStr": (MODELLED, "its parts"),
    "Num": (ABSENT, "Constant"), "Str": (ABSENT, "Constant"), "Bytes": (ABSENT, "Constant"),
    "NameConstant": (ABSENT, "Constant"), "Ellipsis": (ABSENT, "Constant"),
}

PATTERNS: dict[str, tuple[str, str]] = {
    "MatchValue": (MODELLED, "its value read"), "MatchSingleton": (MODELLED, "nothing read"),
    "MatchSequence": (MODELLED, "its patterns"), "MatchMapping": (MODELLED, "keys read; `**rest` captured"),
    "MatchClass": (MODELLED, "class read; its patterns"), "MatchStar": (MODELLED, "`*name` captured"),
    "MatchAs": (MODELLED, "`name` captured; irrefutable without a sub-pattern"),
    "MatchOr": (MODELLED, "its alternatives; irrefutable when one is"),
}

TABLES = {"statement": STATEMENTS, "expression": EXPRESSIONS, "pattern": PATTERNS}
BASES = {"statement": ast.stmt, "expression": ast.expr, "pattern": ast.pattern}

# The kinds the extractor models, by class (those of this Python only): anything else it reports.
MODELLED_TYPES = frozenset(getattr(ast, name) for table in TABLES.values()
                           for name, (handling, _) in table.items() if handling == MODELLED and hasattr(ast, name))


def ast_classes(base: type) -> set[type]:
    """Every class of the running Python's `ast` that derives from `base`."""
    found: set[type] = set()
    todo = [base]
    while todo:
        for sub in todo.pop().__subclasses__():
            if sub.__module__ == "ast" and sub not in found:
                found.add(sub)
                todo.append(sub)
    return found


def category(kind: str) -> str:
    """"statement", "expression" or "pattern" for an `unmodelled` kind (a lower-case class name)."""
    for what, base in BASES.items():
        if any(cls.__name__.lower() == kind for cls in ast_classes(base)):
            return what
    return "construct"
