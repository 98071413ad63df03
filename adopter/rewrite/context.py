"""One source file as the rewriter sees it: the libcst tree, its nodes by position, where
each statement sits in its block, and the names already taken (for fresh names and
imports)."""

from __future__ import annotations

import libcst as cst
from libcst.codemod import CodemodContext
from libcst.codemod.visitors import GatherImportsVisitor
from libcst.metadata import MetadataWrapper, PositionProvider

from adopter.rewrite.spans import NodeKey, SourceLines, Unsafe


class FileContext:
    def __init__(self, path: str, source: str):
        self.path = path
        self.source = source
        self.lines = SourceLines(source)
        self.wrapper = MetadataWrapper(cst.parse_module(source), unsafe_skip_copy=True)
        self.module = self.wrapper.module
        self.nodes: dict[NodeKey, cst.CSTNode] = {}
        self.key_of: dict[int, NodeKey] = {}
        for node, pos in self.wrapper.resolve(PositionProvider).items():
            key = (type(node).__name__, pos.start.line, pos.start.column, pos.end.line, pos.end.column)
            self.nodes.setdefault(key, node)
            self.key_of[id(node)] = key
        self.where: dict[int, tuple[cst.CSTNode, int]] = {}  # id(statement) -> (owner of its block, index)
        self.starting: dict[tuple[int, int], cst.CSTNode] = {}  # (line, col) -> the statement of a block starting there
        self.branch_of: dict[int, tuple[cst.If, str]] = {}  # id(IndentedBlock) -> (its If, "body" | "orelse")
        self.names: set[str] = set()  # every identifier in the file (attribute names included)
        self.module.visit(_Collector(self))
        # what `from m import n [as a]` already binds: libcst's gatherer, which AddImportsVisitor uses too
        imports = GatherImportsVisitor(CodemodContext())
        self.module.visit(imports)
        self.imported: dict[str, str] = {  # qualified name -> local name
            **{f"{module}.{name}": name for module, names in imports.object_mapping.items() for name in names},
            **{f"{module}.{name}": alias for module, pairs in imports.alias_mapping.items() for name, alias in pairs}}
        # what `import m [as a]` binds: the module, by the name the file gives it
        self.modules: dict[str, str] = {**{module: module for module in imports.module_imports},
                                         **{module: alias for module, alias in imports.module_aliases.items()}}

    def node(self, kind: str, span, what: str) -> cst.CSTNode:
        key = self.lines.key(kind, span)
        found = self.nodes.get(key)
        if found is None:
            raise Unsafe(f"{what} at line {span[0]} is not a single `{kind}` (several statements on one line?)")
        return found

    def key(self, kind: str, span) -> NodeKey:
        return self.lines.key(kind, span)

    def statement_line(self, span, what: str) -> cst.SimpleStatementLine:
        return self.node("SimpleStatementLine", span, what)

    def line(self, node: cst.CSTNode) -> int:
        """The first line of a node of this file's tree."""
        return self.key_of[id(node)][1]

    def statement_at(self, line: int, byte_col: int, what: str) -> cst.CSTNode:
        """The statement of a block that starts at an `ast` position."""
        found = self.starting.get((line, self.lines.column(line, byte_col)))
        if found is None:
            raise Unsafe(f"{what} at line {line} is not a statement of its own (several statements on one line?)")
        return found

    def position(self, statement: cst.CSTNode) -> tuple[cst.CSTNode, int]:
        """The block (IndentedBlock or Module) holding `statement`, and its index there."""
        return self.where[id(statement)]


class _Collector(cst.CSTVisitor):
    def __init__(self, ctx: FileContext):
        super().__init__()
        self.ctx = ctx
        self.owners: list[cst.CSTNode] = []

    def _block(self, owner: cst.CSTNode, body) -> None:
        for index, statement in enumerate(body):
            self.ctx.where[id(statement)] = (owner, index)
            self.ctx.starting[self.ctx.key_of[id(statement)][1:3]] = statement

    def visit_Module(self, node: cst.Module) -> None:
        self._block(node, node.body)

    def visit_IndentedBlock(self, node: cst.IndentedBlock) -> None:
        self._block(node, node.body)

    def visit_If(self, node: cst.If) -> None:
        self.ctx.branch_of[id(node.body)] = (node, "body")
        if isinstance(node.orelse, cst.Else):
            self.ctx.branch_of[id(node.orelse.body)] = (node, "orelse")

    def visit_Name(self, node: cst.Name) -> None:
        self.ctx.names.add(node.value)


