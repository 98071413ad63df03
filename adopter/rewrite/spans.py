"""Edits addressed by source position, applied to a libcst tree in one pass.

The analysis reports positions the way Python's `ast` does (1-based lines, UTF-8 byte
columns); libcst counts columns in characters. A `NodeKey` names one CST node by its
type and character span, so an edit finds exactly the node the match reported, and
every byte outside the edited nodes is left as it was.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Union

import libcst as cst
from libcst.metadata import MetadataWrapper, PositionProvider

from adopter.rewrite.unsafe import Unsafe

NodeKey = tuple[str, int, int, int, int]  # CST node type, start line, start col, end line, end col
EditFn = Callable[[cst.CSTNode], Union[cst.CSTNode, cst.RemovalSentinel, cst.FlattenSentinel]]


def inside(inner, outer) -> bool:
    """Whether span `inner` lies strictly inside span `outer` (line, col, end_line, end_col)."""
    return tuple(outer[:2]) <= tuple(inner[:2]) and tuple(inner[2:]) <= tuple(outer[2:]) and inner != outer


# Why a match that overlaps a guarded rewrite's kept original is not rewritten, on every pass.
OVERLAPS_FALLBACK = "overlaps the statements a guarded rewrite keeps as its fallback"


class AlreadyRewritten(Unsafe):
    """A guarded match found inside the original code an earlier guarded rewrite kept:
    `lines` (first, last) is that kept range, which other matches must leave alone too."""

    def __init__(self, message: str, lines: tuple[int, int]):
        super().__init__(message)
        self.lines = lines


class SourceLines:
    """Converts `ast` byte columns to libcst character columns."""

    def __init__(self, source: str):
        self.lines = source.split("\n")

    def column(self, line: int, byte_col: int) -> int:
        text = self.lines[line - 1] if 0 < line <= len(self.lines) else ""
        return len(text.encode("utf-8")[:byte_col].decode("utf-8", errors="ignore"))

    def key(self, kind: str, span: list[int] | tuple[int, ...]) -> NodeKey:
        line, col, end_line, end_col = span
        return kind, line, self.column(line, col), end_line, self.column(end_line, end_col)


@dataclass
class NodeEdit:
    """What happens to one node: functions of the node (in order), and for a statement,
    whether it goes and which new statements come before and after it."""

    fns: list[EditFn] = field(default_factory=list)
    remove: bool = False
    before: list[cst.BaseStatement] = field(default_factory=list)
    after: list[cst.BaseStatement] = field(default_factory=list)


@dataclass
class EditSet:
    edits: dict[NodeKey, NodeEdit] = field(default_factory=dict)

    def at(self, key: NodeKey) -> NodeEdit:
        return self.edits.setdefault(key, NodeEdit())

    def extend(self, other: "EditSet") -> None:
        for key, edit in other.edits.items():
            mine = self.at(key)
            mine.fns += edit.fns
            mine.remove |= edit.remove
            mine.before += edit.before
            mine.after += edit.after


class _Editor(cst.CSTTransformer):
    METADATA_DEPENDENCIES = (PositionProvider,)

    def __init__(self, edits: EditSet):
        super().__init__()
        self.pending = dict(edits.edits)
        self.carry: list[cst.EmptyLine] = []  # blank lines and comments above a removed statement
        self.trailing: list[str] = []  # the comments at the ends of removed statements' lines
        self.heir: int | None = None  # the statement after it, which inherits them
        # A block's first statement (after its docstring) that is removed leaves the next one
        # first: that one's blank lines separated it from removed code, and a block does not
        # open with a blank line. `leads` marks such a removal until a sibling inherits it.
        self.firsts: set[int] = set()
        self.leads = False

    def on_visit(self, node) -> bool:
        if (self.carry or self.leads or self.trailing) and self.heir is None and isinstance(
                node, (cst.SimpleStatementLine, cst.BaseCompoundStatement)):
            self.heir = id(node)
        if not super().on_visit(node):
            return False
        # descend only where an edit is left: the rest of the tree is kept as it is, and
        # visiting it would be most of a file's rewrite
        position = self.get_metadata(PositionProvider, node, None)
        descend = position is None or any(_within(key, position) for key in self.pending)
        if descend and isinstance(node, cst.IndentedBlock):
            start = 1 if node.body and is_docstring(node.body[0]) else 0
            if len(node.body) > start:
                self.firsts.add(id(node.body[start]))
        return descend

    def on_leave(self, original_node, updated_node):
        lead = False
        if self.heir == id(original_node) and isinstance(updated_node, cst.CSTNode):
            blank_only = all(line.comment is None for line in self.carry)
            if not (blank_only and updated_node.leading_lines):  # no doubled blank lines
                updated_node = updated_node.with_changes(leading_lines=[*self.carry, *updated_node.leading_lines])
            if self.leads:  # the blank lines above its first comment (or all, without one) go
                lines = list(updated_node.leading_lines)
                while lines and lines[0].comment is None:
                    lines.pop(0)
                updated_node, lead = updated_node.with_changes(leading_lines=lines), True
            updated_node = self._inherit_trailing(updated_node)
            self.carry, self.heir, self.leads, self.trailing = [], None, False, []
        if isinstance(original_node, cst.IndentedBlock) and self.heir is None:
            self.leads = False  # its last statements went: no sibling inherits first place
        return self._edit(original_node, updated_node, lead)

    def _edit(self, original_node, updated_node, lead: bool = False):
        position = self.get_metadata(PositionProvider, original_node, None)
        if position is None:
            return updated_node
        key = (type(original_node).__name__, position.start.line, position.start.column,
               position.end.line, position.end.column)
        edit = self.pending.pop(key, None)
        if edit is None:
            return updated_node
        for fn in edit.fns:
            updated_node = fn(updated_node)
        if not (edit.remove or edit.before or edit.after):
            return updated_node
        statements = edit.before + ([] if edit.remove else [updated_node]) + edit.after
        if edit.remove and not statements and updated_node.leading_lines:
            self.carry, self.heir = list(updated_node.leading_lines), None
        comment = getattr(getattr(updated_node, "trailing_whitespace", None), "comment", None)
        if edit.remove and not statements and comment is not None:
            self.trailing, self.heir = [*self.trailing, comment.value], None
        if edit.remove and not statements and (lead or id(original_node) in self.firsts):
            self.leads, self.heir = True, None
        if not statements:
            return cst.RemovalSentinel.REMOVE
        return statements[0] if len(statements) == 1 else cst.FlattenSentinel(statements)


    def _inherit_trailing(self, node):
        """The statement after removed ones takes their end-of-line comments: at the end of its
        own line (before its own comment, in the order of the lines), or, for a compound
        statement, on lines above it."""
        if not self.trailing:
            return node
        if isinstance(node, cst.SimpleStatementLine):
            own = node.trailing_whitespace.comment
            text = "  ".join(self.trailing + ([own.value] if own else []))
            return node.with_changes(trailing_whitespace=node.trailing_whitespace.with_changes(
                whitespace=node.trailing_whitespace.whitespace if own else cst.SimpleWhitespace("  "),
                comment=cst.Comment(text)))
        lines = [cst.EmptyLine(comment=cst.Comment(text)) for text in self.trailing]
        return node.with_changes(leading_lines=[*node.leading_lines, *lines])


def is_docstring(statement) -> bool:
    return (isinstance(statement, cst.SimpleStatementLine) and len(statement.body) == 1
            and isinstance(statement.body[0], cst.Expr)
            and isinstance(statement.body[0].value, (cst.SimpleString, cst.ConcatenatedString)))


def _within(key: NodeKey, position) -> bool:
    """Whether the node of `key` lies inside the range `position` (libcst's CodeRange)."""
    _, line, col, end_line, end_col = key
    return ((position.start.line, position.start.column) <= (line, col)
            and (end_line, end_col) <= (position.end.line, position.end.column))


def apply_edits(wrapper: MetadataWrapper, edits: EditSet) -> cst.Module:
    """The module with every edit applied; `Unsafe` if an edit's node is not found or refuses."""
    editor = _Editor(edits)
    module = wrapper.visit(editor)
    if editor.pending:
        kind, line, col, *_ = next(iter(editor.pending))
        raise Unsafe(f"no {kind} at line {line}, column {col + 1} to edit")
    return module
