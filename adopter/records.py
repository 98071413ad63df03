"""The records every layer passes on: a rule's match (with the sites of its nodes and
constructors and its guard literals) and a diagnostic (errors as values: a file, a line
when known, and a reason). Plain dataclasses; this module imports nothing of the project,
so any layer may use it. The JSONL and SARIF outputs are made from these records."""

from __future__ import annotations

import json
import unicodedata
from dataclasses import dataclass, field


def display_path(path: str) -> str:
    """A path for one-line output: as it is, or quoted with escapes (JSON string syntax)
    when it holds a control character, a quote, or a separator such as U+2028 that could
    end the line or forge another."""
    if any(c == '"' or unicodedata.category(c) in ("Cc", "Zl", "Zp") for c in path):
        return json.dumps(path, ensure_ascii=False)
    return path


@dataclass(frozen=True)
class Diagnostic:
    file: str
    line: int | None
    col: int | None
    message: str
    severity: str = "error"  # "error" fails the run; "warning" is reported only

    def __str__(self) -> str:
        where = display_path(self.file)
        if self.line is not None:
            where += f":{self.line}"
            if self.col is not None:
                where += f":{self.col}"
        return f"{where}: {self.severity}: {self.message}"


class AdopterError(Exception):
    """An error the user can act on; carries its diagnostic."""

    def __init__(self, diagnostic: Diagnostic):
        super().__init__(str(diagnostic))
        self.diagnostic = diagnostic


@dataclass(frozen=True)
class Literal:
    """A guard literal: `condition` (its source text) evaluates to `holds`."""
    condition: str
    holds: bool

    def to_json(self) -> dict:
        return {"condition": self.condition, "holds": self.holds}

    def __str__(self) -> str:
        return self.condition if self.holds else f"not {self.condition}"


Span = list[int]  # line, col, end_line, end_col (lines from 1, columns from 0)


MODULE_LEVEL = "-"  # the class of code outside any class (a module-level function)
LOCALS = ".<locals>."  # joins a function defined inside another to it, as in `__qualname__`


def is_nested(function: str) -> bool:
    """The function (as a site names it) is defined by a def inside another function."""
    return LOCALS in function


@dataclass
class NodeSite:
    """Where a pattern node of a match is: for the rewriter, which edits it there."""
    span: Span
    stmt: Span  # the span of the statement holding it
    function: str
    class_: str
    var: str  # the pattern's output variable
    sequential: bool  # a layer of an nn.Sequential (anchored at its constructor)
    # for a node of a canonical operation: the spelling it is written in (`torch.Tensor.softmax`)
    # and how it is called (function, method, or layer: an object called, a module or a stored function)
    spelling: str = ""
    form: str = ""
    # for an object called (form "layer"): the spans of the calls that may build it
    built: list[Span] = field(default_factory=list)

    def to_json(self) -> dict:
        return {"span": self.span, "stmt": self.stmt, "function": self.function, "class": self.class_,
                "var": self.var, "sequential": self.sequential, "spelling": self.spelling, "form": self.form,
                "built": self.built}


@dataclass(frozen=True)
class LentCtor:
    """A construction one file of a project lends the files whose classes subclass its class
    (adopter/matches/project.py): every instance of class `qname` has `self.<attr>`, which the
    call at `span` of `file` (in `function` of `class_`) may build as a `type`."""
    qname: str
    attr: str
    type: str
    file: str
    span: Span
    stmt: Span
    function: str
    class_: str


@dataclass
class CtorSite:
    """Where a constructor a match binds in `__init__` is, and what else uses its module."""
    span: Span
    stmt: Span
    function: str
    class_: str
    var: str  # the `init:` variable
    object: str  # the module's text: `self.dropout`, `self.layers[2]`
    sequential: bool
    other_uses: list[list[int]] = field(default_factory=list)  # (line, col) of reads outside the match
    # the class is chosen at run time (`cls(...)`, `CLASSES[key](...)`): matched by what it may
    # be, never replaced (not in the JSON output)
    chosen: bool = False
    # built by a function or method that returns it (`self.conv = self._make_conv()`): found,
    # never edited, as the rewriter edits only constructions assigned in the class's methods
    returned: bool = False
    # the file it is in, where that is another file of the project than the match's (a base
    # class's `__init__` there built it); in the JSON output when set
    file: str = ""

    def to_json(self) -> dict:
        out = {"span": self.span, "stmt": self.stmt, "function": self.function, "class": self.class_,
               "var": self.var, "object": self.object, "sequential": self.sequential, "other_uses": self.other_uses}
        return {**out, "file": self.file} if self.file else out


@dataclass(frozen=True)
class FusedBranch:
    """An `if` of a guarded range (starting at `line`, byte column `col`) whose test the guard
    decides: on the fused path its `branch` ("body" or "orelse") runs."""
    line: int
    col: int
    branch: str


@dataclass(frozen=True)
class FusedConflict:
    """A statement of a guarded range (first line `line`) the fused copy cannot keep: it holds
    a folded statement under a test the guard does not decide (`holds`), names `name`, a value
    the fusion removes (`names`), or an `elif` there would have to run (`elif`)."""
    line: int
    kind: str
    name: str = ""


@dataclass(frozen=True)
class UnstableName:
    """`name`, which a condition of the guard reads, is assigned at `line`, in or after the
    guarded range: the guard, evaluated before the range, could see another value."""
    name: str
    line: int


@dataclass
class Layout:
    """The statements around a match, as the rewriter edits them (datalog/match/layout.lp)."""
    nested: list[int] = field(default_factory=list)  # nodes inside another matched node's expression
    # nodes in a module-level function that a call inside another matched node's expression
    # runs (rotary's `rotate_half(q)`): the rewrite drops that call and leaves the function alone
    inlined: list[int] = field(default_factory=list)
    # consecutive folded statements (first lines) with other statements between them
    fold_gaps: list[list[int]] = field(default_factory=list)
    # the branch ("body", "orelse") of the `if` right after the folded statements that the
    # last node opens: they move into the other branch ("" when they stay where they are)
    fold_into: str = ""
    fold_elif: bool = False  # that other branch is an `elif` (no block to move them into)
    # folded nodes whose statement is not `name = <the node's call>` alone on its line
    fold_unfit: list[int] = field(default_factory=list)
    # constructions whose statement is `target = <the construction>`, alone on its line, with
    # other statements in its block: removing it removes only the construction
    ctor_alone: list[int] = field(default_factory=list)
    # qualified names called in the other branch of an `if` holding a guarded match
    fallback_calls: list[str] = field(default_factory=list)
    # The rest is for guarded matches only.
    # the kept range: where its first and last statement start (line, col, line2, col2), in
    # the innermost block holding every folded statement; None when no block does
    guard_range: list[int] | None = None
    # when the original runs: alternatives, each a conjunction of literals, shortest first
    guard: list[list[Literal]] = field(default_factory=list)
    guard_always: bool = False  # an alternative is empty: the original would run on every path
    fused_branches: list[FusedBranch] = field(default_factory=list)
    fused_conflicts: list[FusedConflict] = field(default_factory=list)
    guard_unstable: list[UnstableName] = field(default_factory=list)


@dataclass
class Match:
    """One location where a rule matches: (rule, file, class, line, column)."""
    rule: str
    file: str
    line: int
    end_line: int
    function: str
    init_lines: list[int]
    bindings: dict[str, str]
    path: list[Literal]  # the guard literals of the matched path (the nearest, when path_truncated)
    col: int = 0
    end_col: int = 0
    class_: str = ""
    # What the rewriter needs, one site per pattern node and per constructor, in pattern order
    nodes: list[NodeSite] = field(default_factory=list)
    ctors: list[CtorSite] = field(default_factory=list)
    # Where a value the match computes is also read elsewhere: one list of guard literals per
    # such read, all of which hold when it happens. The match holds on the paths where no
    # list holds entirely (a guarded rewrite keeps the original code on the others).
    eager_when: list[list[Literal]] = field(default_factory=list)
    # For `fallback: eager` rules: reads outside the match that may see a removed value on a
    # path the guard cannot tell (not in the JSON output; the rewriter refuses such a match).
    merged_reads: int = 0
    layout: Layout | None = None  # when the scan was asked for it (for `apply`); not in the JSON output
    # pattern indices of binary nodes whose operands matched swapped (a commutative operator);
    # not in the JSON output, whose bindings already follow it
    swapped: list[int] = field(default_factory=list)
    # found in a subclass's root that runs the `forward` of a base class (its nodes are in the
    # base's code, which other classes share): not rewritten; not in the JSON output
    inherited: bool = False
    # found in the `__call__` of an object the module calls with itself as an argument
    # (`self.processor(self, x)`): `self` there is that object, not the module, so the
    # rewriter's `self.<member>` would name the wrong object; not rewritten; not in the JSON output
    in_called_object: bool = False
    # found in a function TorchScript compiles (`@torch.jit.script`), named here: the kernel a
    # rewrite calls would have to compile too; not rewritten; not in the JSON output
    torchscript: str = ""
    # `path` holds only the literals of the scopes nearest the match's nodes (below many early
    # exits a full path grows with the method's length); in the JSON output only when true
    path_truncated: bool = False
    shape: str = ""  # which of the rule's files matched (`<rule>.<shape>.adopt`); in the JSON output when set

    def to_json(self) -> dict:
        """The object of one JSONL line."""
        return {"rule": self.rule, "file": self.file, "class": self.class_, "function": self.function,
                "line": self.line, "end_line": self.end_line, "init_lines": self.init_lines, "bindings": self.bindings,
                "path": [lit.to_json() for lit in self.path],
                "eager_when": [[lit.to_json() for lit in read] for read in self.eager_when],
                "col": self.col, "end_col": self.end_col,
                "nodes": [site.to_json() for site in self.nodes], "ctors": [site.to_json() for site in self.ctors],
                **({"path_truncated": True} if self.path_truncated else {}),
                **({"shape": self.shape} if self.shape else {})}

    @property
    def where(self) -> str:
        """`Class.function`, or `function` for a module-level function."""
        return self.function if self.class_ == MODULE_LEVEL else f"{self.class_}.{self.function}"

    @property
    def location(self) -> tuple:
        """Two calls on one line are two locations; one call reached from two methods is one."""
        return (self.rule, self.file, self.class_, self.line, self.col)

    @property
    def rule_key(self) -> str:
        """The key of the rule file that matched (`Rule.key`): its patterns are the rewrite's."""
        return f"{self.rule}.{self.shape}" if self.shape else self.rule


@dataclass
class FilePatch:
    """One file's rewrite: its text before and after, the matches applied and those refused
    with their reasons (adopter/rewrite/patch.py)."""

    path: str
    original: str
    patched: str
    applied: list[Match] = field(default_factory=list)
    refused: list[tuple[Match, str]] = field(default_factory=list)
    encoding: str = "utf-8"  # the file's, for writing it back (a coding line, a BOM)

    @property
    def changed(self) -> bool:
        return self.patched != self.original


@dataclass
class NearMiss:
    """A place where a rule's pattern is found but exactly one check fails (`scan --explain`):
    where the candidate is, which check, and its evidence (`detail`, and the line it points at, 0: none)."""
    rule: str
    file: str
    line: int
    function: str
    check: str
    detail: str
    detail_line: int = 0
    col: int = 0
    class_: str = ""

    def to_json(self) -> dict:
        """The object of one JSONL line (a match's location fields, and `near_miss`)."""
        return {"rule": self.rule, "file": self.file, "class": self.class_, "function": self.function,
                "line": self.line, "col": self.col,
                "near_miss": {"check": self.check, "detail": self.detail, "detail_line": self.detail_line}}

    where = Match.where
    location = Match.location  # (rule, file, class, line, column), as a match's

    def reason(self) -> str:
        """One line a person reads: what failed, and where."""
        at = f" (line {self.detail_line})" if self.detail_line else ""
        return {"infeasible": f"its nodes need `{self.detail}` both true and false",
                "constructions exclusive": f"its layers are built on paths that exclude each other (`{self.detail}`)",
                "layer not built": f"the layer is built{at} only where `self.{self.detail}` is the other way",
                "guards differ": f"its nodes run under different guards (`{self.detail}` guards one of them only)",
                "inputs differ": "the inputs one `$variable` names may hold different values",
                "read outside": f"a value it removes is read outside the match{at}",
                "part read": f"a node of it takes only a part of the value before it, through a subscript{at}",
                "unmodelled": f"its function holds `{self.detail}`, which the analyses do not model",
                "sequential mixed": "its layers come from different constructions of one nn.Sequential",
                "constant": f"an input differs from the rule's constant: {self.detail}{at}"}.get(self.check, self.check)
