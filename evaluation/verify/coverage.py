"""Which lines a patch added, which patch each belongs to, and which model classes of a
file can run them: the bookkeeping that lets `make verify` count verification per patch.

A patch is only verified when the lines it added ran (outputs of a model that never
reaches the patched code prove nothing), so for each added line we need
  - its patch: the patch of the same class (patches.tsv names the class), or, when a
    class has several, the one whose original line is nearest;
  - model classes whose construction reaches its class: a static over-approximation,
    the top-level names each class or function of the file mentions, closed
    transitively. The runs then say which lines really ran.
"""

from __future__ import annotations

import ast
import difflib
import re
from dataclasses import dataclass

from adopter.records import MODULE_LEVEL  # the class of a patch in a module-level function (patches.tsv)

_SKIP = ("from ", "import ", "else:", "#")
# a line holding only brackets (and the keyword that opens them) runs no code of its own:
# Python reports no line event there (`if (` and `):` around a long condition)
_BRACKETS_ONLY = re.compile(r"^((if|elif|while|return)\s*)?[(\[{]$|^[)\]}]+:?$")


@dataclass(frozen=True)
class AddedLine:
    line: int  # in the patched file
    original_line: int  # where it sits in the original (nearest line of the replaced block)
    cls: str | None  # enclosing top-level class in the patched file


def added_lines(original: str, patched: str) -> list[AddedLine]:
    """Lines of `patched` that the patch added (imports, `else:`, comments and lines of
    brackets aside). Lines compare without their indentation: an original statement that
    a guarded rewrite only indented (under `if <fallback condition>:`) is not added."""
    a, b = original.splitlines(), patched.splitlines()
    owner = _line_owner(patched)
    lines = []
    matcher = difflib.SequenceMatcher(None, [x.strip() for x in a], [x.strip() for x in b], autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag not in ("replace", "insert"):
            continue
        for j in range(j1, j2):
            text = b[j].strip()
            if text and not text.startswith(_SKIP) and not _BRACKETS_ONLY.match(text):
                near = i1 + min(j - j1, max(i2 - i1 - 1, 0))
                lines.append(AddedLine(j + 1, near + 1, owner.get(j + 1)))
    return lines


def _line_owner(source: str) -> dict[int, str]:
    owner = {}
    for node in ast.parse(source).body:
        if isinstance(node, ast.ClassDef):
            for line in range(node.lineno, node.end_lineno + 1):
                owner[line] = node.name
    return owner


def assign(lines: list[AddedLine], patches: list[tuple[str, int]]) -> dict[int, list[int]]:
    """Patch index (into `patches`, (class, original line) pairs; class `-` for a patch in a
    module-level function) -> its added lines. A line outside every class goes to the
    nearest `-` patch; a line of a class no patch is in belongs to every patch of the file."""
    by_class: dict[str, list[int]] = {}
    for index, (cls, _) in enumerate(patches):
        by_class.setdefault(cls, []).append(index)
    owned: dict[int, list[int]] = {i: [] for i in range(len(patches))}
    for added in lines:
        candidates = by_class.get(added.cls or MODULE_LEVEL)
        if not candidates:
            for index in owned:
                owned[index].append(added.line)
            continue
        nearest = min(candidates, key=lambda i: abs(patches[i][1] - added.original_line))
        owned[nearest].append(added.line)
    return owned


def covering_classes(source: str, targets: set[str], limit: int = 6) -> list[str]:
    """Model classes of the file (PreTrainedModel subclasses with their own name) whose
    construction may reach a class in `targets`, best cover first, at most `limit`."""
    tree = ast.parse(source)
    defs = {n.name: n for n in tree.body if isinstance(n, (ast.ClassDef, ast.FunctionDef))}
    # The shared base class is not followed: its `_init_weights` names every layer type.
    mentions = {name: {x.id for x in ast.walk(node) if isinstance(x, ast.Name) and x.id in defs
                       and not x.id.endswith("PreTrainedModel")} - {name}
                for name, node in defs.items()}

    def reach(name: str) -> set[str]:
        seen, todo = {name}, [name]
        while todo:
            for nxt in mentions.get(todo.pop(), ()):
                if nxt not in seen:
                    seen.add(nxt)
                    todo.append(nxt)
        return seen

    def is_model(name: str, seen: frozenset = frozenset()) -> bool:
        node = defs.get(name)
        if not isinstance(node, ast.ClassDef) or name in seen:
            return False
        bases = [b.id for b in node.bases if isinstance(b, ast.Name)]
        return any(b.endswith("PreTrainedModel") or is_model(b, seen | {name}) for b in bases)

    covers = {name: reach(name) & targets for name in defs
              if is_model(name) and not name.endswith("PreTrainedModel")}
    chosen, left = [], set(targets)
    while left and len(chosen) < limit:
        best = max(covers, key=lambda n: (len(covers[n] & left), -len(n)), default=None)
        if best is None or not covers[best] & left:
            break
        chosen.append(best)
        left -= covers.pop(best)
    # Classes that cover nothing new still help when the first choice cannot be built.
    spare = sorted((n for n in covers if covers[n]), key=lambda n: (-len(covers[n]), len(n)))
    return chosen + spare[: max(0, limit - len(chosen))]


# Names that forward() reads from the config when the caller passes None.
_CONFIG_FLAGS = {"output_attentions", "output_hidden_states", "use_cache"}


def guard_settings(source: str, line: int) -> dict:
    """Config values that take the `if` branches leading to `line`: for each enclosing `if`
    whose test reads `self.config.X`, `config.X`, `self.X` (set from the config in the
    class) or an output flag, the value that enters the branch holding `line`.
    Tests it cannot read (shapes, dtypes, other locals) are left alone."""
    tree = ast.parse(source)
    settings: dict = {}
    for cls in (n for n in tree.body if isinstance(n, ast.ClassDef) and n.lineno <= line <= n.end_lineno):
        aliases = _config_aliases(cls)
        node: ast.AST = cls
        while True:
            inner = next((c for c in ast.iter_child_nodes(node) if isinstance(c, ast.stmt)
                          and c.lineno <= line <= c.end_lineno), None)
            if inner is None:
                break
            if isinstance(inner, ast.If) and not inner.test.lineno <= line <= inner.test.end_lineno:
                in_body = any(s.lineno <= line <= s.end_lineno for s in inner.body)
                settings.update(_wanted(inner.test, in_body, aliases))
            node = inner
    return settings


def _config_aliases(cls: ast.ClassDef) -> dict[str, str]:
    """`self.x = config.y` / `self.x = self.config.y` in the class: x -> y."""
    aliases = {}
    for node in ast.walk(cls):
        if isinstance(node, ast.Assign) and len(node.targets) == 1:
            target, key = node.targets[0], _config_key(node.value, {})
            if key and isinstance(target, ast.Attribute) and _is_self(target.value):
                aliases[target.attr] = key
    return aliases


def _is_self(node: ast.AST) -> bool:
    return isinstance(node, ast.Name) and node.id == "self"


def _config_key(node: ast.AST, aliases: dict[str, str]) -> str | None:
    if isinstance(node, ast.Attribute):
        owner = node.value
        if isinstance(owner, ast.Name) and owner.id == "config":
            return node.attr
        if isinstance(owner, ast.Attribute) and owner.attr == "config" and _is_self(owner.value):
            return node.attr
        if _is_self(owner):
            return aliases.get(node.attr)
    if isinstance(node, ast.Name) and node.id in _CONFIG_FLAGS:
        return node.id
    return None


def _wanted(test: ast.expr, value: bool, aliases: dict[str, str]) -> dict:
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        return _wanted(test.operand, not value, aliases)
    if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And) == value:
        found: dict = {}
        for operand in test.values:  # and-true / or-false: every operand
            found.update(_wanted(operand, value, aliases))
        return found
    if isinstance(test, ast.BoolOp):  # and-false / or-true: one operand suffices
        return next((w for w in (_wanted(o, value, aliases) for o in test.values) if w), {})
    if isinstance(test, ast.Compare) and len(test.ops) == 1 and value and isinstance(test.ops[0], ast.Eq) \
            and isinstance(test.comparators[0], ast.Constant):
        key = _config_key(test.left, aliases)
        return {key: test.comparators[0].value} if key else {}
    key = _config_key(test, aliases)
    return {key: value} if key else {}
