"""The imports a rewrite needs, added as a reviewer (and isort or ruff's `I001`) expects them.

libcst's AddImportsVisitor adds each `from m import n` the file lacks, merging into an import
of the same module where there is one; a new statement it puts after the file's last import.
That is after the file's own (first-party) imports, where isort puts a library's import in the
section of third-party imports, in order. So each new statement is moved there: the file's
top-level import block is read as isort's sections (`__future__`, the standard library, third
party, first party: the file's own top-level package and relative imports) and the statement
goes where it sorts (`import m` before `from m import n` in a section, then by module name).
A file without such a block keeps libcst's placement.
"""

from __future__ import annotations

import sys

import libcst as cst
from libcst.codemod import CodemodContext
from libcst.codemod.visitors import AddImportsVisitor
from libcst.helpers import get_full_name_for_node

from adopter.rewrite.kernel_sets import KERNELS_PACKAGE, KERNELS_REQUIREMENT
from adopter.rewrite.spans import is_docstring

_FUTURE, _STDLIB, _THIRD_PARTY, _FIRST_PARTY = range(4)


def add_imports(module: cst.Module, needed: list[tuple[str, str, str | None]], first_party: str) -> cst.Module:
    """`module` with `from m import n [as a]` for each of `needed`, each new statement in its
    isort section and place (`first_party`: the top-level package the file belongs to)."""
    if not needed:
        return module
    before = {module.code_for_node(statement) for statement in module.body}
    context = CodemodContext()
    for module_name, name, alias in needed:
        AddImportsVisitor.add_needed_import(context, module_name, name, alias)
    added = AddImportsVisitor(context).transform_module(module)
    added = added.with_changes(body=[_required(s) if _import_of(s) is not None and added.code_for_node(s) not in before
                                     else s for s in added.body])
    new = [s for s in added.body if _import_of(s) is not None and added.code_for_node(s) not in before]
    body = [s for s in added.body if all(s is not n for n in new)]
    block = _import_block(body)
    if not block:
        return added
    for statement in new:
        body = _insert(body, _import_block(body), statement, first_party)
    return added.with_changes(body=body)


def _required(statement):
    """A new import of the kernels' distribution, saying which version of it the file needs
    (`from adopter_kernels import gated_act  # adopter-kernels>=0.1.0`)."""
    node = _import_of(statement)
    module = get_full_name_for_node(node.module) if isinstance(node, cst.ImportFrom) and node.module else ""
    if module.split(".")[0] != KERNELS_PACKAGE or statement.trailing_whitespace.comment is not None:
        return statement
    return statement.with_changes(trailing_whitespace=cst.TrailingWhitespace(
        whitespace=cst.SimpleWhitespace("  "), comment=cst.Comment(f"# {KERNELS_REQUIREMENT}")))


def _import_of(statement) -> cst.Import | cst.ImportFrom | None:
    """The import a top-level statement line is, if it is one import alone."""
    if isinstance(statement, cst.SimpleStatementLine) and len(statement.body) == 1 \
            and isinstance(statement.body[0], (cst.Import, cst.ImportFrom)):
        return statement.body[0]
    return None


def _import_block(body) -> list[int]:
    """The indices of the file's leading imports (after a docstring), up to its first other statement."""
    indices = []
    for index, statement in enumerate(body):
        if index == 0 and not indices and is_docstring(statement):
            continue
        if _import_of(statement) is None:
            break
        indices.append(index)
    return indices


def _sort_key(statement, first_party: str) -> tuple[int, bool, str]:
    """isort's order: section, then `import m` before `from m import n`, then the module."""
    node = _import_of(statement)
    if isinstance(node, cst.ImportFrom):
        if node.relative:
            return _FIRST_PARTY, True, "." * len(node.relative) + (get_full_name_for_node(node.module) or "")
        name, is_from = get_full_name_for_node(node.module) or "", True
    else:
        name, is_from = get_full_name_for_node(node.names[0].name) or "", False
    top = name.split(".")[0]
    section = (_FUTURE if top == "__future__" else _STDLIB if top in sys.stdlib_module_names
               else _FIRST_PARTY if top == first_party else _THIRD_PARTY)
    return section, is_from, name.lower()


def _insert(body: list, block: list[int], statement, first_party: str) -> list:
    """`body` with `statement` placed after the last import of `block` that sorts before it,
    with the blank lines that keep isort's sections apart."""
    key = _sort_key(statement, first_party)
    earlier = [i for i in block if _sort_key(body[i], first_party) <= key]
    at = earlier[-1] + 1 if earlier else block[0]
    previous = _sort_key(body[at - 1], first_party)[0] if earlier else None
    following = body[at] if at <= block[-1] else None
    after = _sort_key(following, first_party)[0] if following is not None else None
    own = [line for line in statement.leading_lines if line.comment is not None]  # (one merged into moves with them)
    if previous != key[0] and (after == key[0] or previous is None):
        # first of its section, or of the block: it takes the lines above (blank, comments);
        # a following section is set apart by a blank line
        statement = statement.with_changes(leading_lines=[*following.leading_lines, *own])
        following = following.with_changes(leading_lines=[] if after == key[0] else [cst.EmptyLine()])
        return [*body[:at], statement, following, *body[at + 1:]]
    statement = statement.with_changes(leading_lines=([cst.EmptyLine()] if previous != key[0] else []) + own)
    return [*body[:at], statement, *body[at:]]
