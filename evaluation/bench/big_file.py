"""Large single files built from the zoo, for the per-file cost bench (`make bench-bigfile`).

Deterministic (sorted zoo files, no randomness, no downloads): the same zoo and size give
the same bytes. Shapes:
  classes    zoo modules concatenated whole, in name order, up to the size: many classes
  forward    one class whose `forward` runs the bodies of many zoo `forward` methods one after
             the other, each followed by an early `if self.exit_K: return out_K`; its
             `__init__` builds every layer they use and its other methods are theirs. Attributes
             and methods of the K-th source class get the suffix `_K`, so each block reads its
             own layers. Many statements, many branches, every later statement under every
             earlier exit.
  functions  every module-level function of the zoo, renamed `name_K` (K the pass over the
             zoo), with the calls between functions of one module renamed alike

Usage: python -m evaluation.bench.big_file SHAPE LINES OUT.py [--zoo hf_models]
A file ends at a whole module, block or function, so it holds at least LINES lines and at
most one more unit.
"""

from __future__ import annotations

import argparse
import ast
import sys
from pathlib import Path
from typing import Iterator

from adopter.support.atomic import atomic_write_text

SHAPES = ("classes", "forward", "functions")


def zoo_files(zoo: Path) -> list[Path]:
    return sorted(zoo.glob("modeling_*.py"))


def _lines(text: str) -> int:
    return text.count("\n")


def _take(units: Iterator[str], lines: int, head: str = "") -> str:
    out, count = [head], _lines(head)
    for unit in units:
        if count >= lines:
            break
        out.append(unit)
        count += _lines(unit)
    return "".join(out)


def _cycle(zoo: Path) -> Iterator[tuple[int, Path]]:
    """(pass, file) over the zoo, again and again."""
    files = zoo_files(zoo)
    for round_ in range(1_000):
        for path in files:
            yield round_, path


# -- classes -----------------------------------------------------------------------------

def classes(zoo: Path, lines: int) -> str:
    return _take((path.read_text() + "\n" for _, path in _cycle(zoo)), lines)


# -- functions ---------------------------------------------------------------------------

class _Rename(ast.NodeTransformer):
    """Rename the names in `names` (definitions and loads) to `name_suffix`."""

    def __init__(self, names: set[str], suffix: str):
        self.names, self.suffix = names, suffix

    def visit_Name(self, node: ast.Name) -> ast.Name:
        if node.id in self.names:
            node.id = f"{node.id}_{self.suffix}"
        return node

    def visit_FunctionDef(self, node: ast.FunctionDef) -> ast.FunctionDef:
        if node.name in self.names:
            node.name = f"{node.name}_{self.suffix}"
        self.generic_visit(node)
        return node


def _imports(tree: ast.Module) -> list[ast.stmt]:
    return [node for node in tree.body if isinstance(node, (ast.Import, ast.ImportFrom))]


def _function_units(zoo: Path) -> Iterator[str]:
    seen_imports: set[str] = set()
    for round_, path in _cycle(zoo):
        tree = ast.parse(path.read_text())
        functions = [node for node in tree.body if isinstance(node, ast.FunctionDef)]
        if not functions:
            continue
        rename = _Rename({f.name for f in functions}, f"{round_}_{path.stem.removeprefix('modeling_')}")
        imports = [text for text in map(ast.unparse, _imports(tree)) if text not in seen_imports]
        seen_imports.update(imports)
        yield "".join(line + "\n" for line in imports) + "".join(
            "\n\n" + ast.unparse(rename.visit(f)) + "\n" for f in functions)


def functions(zoo: Path, lines: int) -> str:
    return _take(_function_units(zoo), lines)


# -- forward -----------------------------------------------------------------------------

class _Suffix(ast.NodeTransformer):
    """`self.attr` -> `self.attr_K`, method definitions alike; `return X` -> `out_K = X`."""

    def __init__(self, suffix: str, methods: bool):
        self.suffix, self.methods = suffix, methods

    def visit_Attribute(self, node: ast.Attribute) -> ast.Attribute:
        self.generic_visit(node)
        if isinstance(node.value, ast.Name) and node.value.id == "self":
            node.attr = f"{node.attr}_{self.suffix}"
        return node

    def visit_Return(self, node: ast.Return) -> ast.stmt:
        self.generic_visit(node)
        if self.methods:  # a helper method keeps its returns
            return node
        target = ast.Name(f"out_{self.suffix}", ast.Store())
        return ast.Assign([target], node.value or ast.Constant(None), lineno=0)

    def visit_FunctionDef(self, node: ast.FunctionDef) -> ast.FunctionDef:
        # a nested function keeps its own returns
        methods, self.methods = self.methods, True
        self.generic_visit(node)
        self.methods = methods
        return node


def _is_super_init(node: ast.stmt) -> bool:
    return (isinstance(node, ast.Expr) and isinstance(node.value, ast.Call)
            and isinstance(node.value.func, ast.Attribute) and node.value.func.attr == "__init__")


def _blocks(zoo: Path) -> Iterator[tuple[list[str], list[ast.stmt], list[ast.stmt], list[ast.FunctionDef], list[ast.arg]]]:
    """(imports, init body, forward body, other methods, forward parameters) of every zoo
    class with both `__init__` and `forward`, renamed for its position K."""
    k = 0
    for _, path in _cycle(zoo):
        tree = ast.parse(path.read_text())
        imports = list(map(ast.unparse, _imports(tree)))
        for cls in (node for node in tree.body if isinstance(node, ast.ClassDef)):
            methods = {m.name: m for m in cls.body if isinstance(m, ast.FunctionDef)}
            if "__init__" not in methods or "forward" not in methods:
                continue
            k += 1
            suffix = str(k)
            init = [s for s in methods["__init__"].body if not _is_super_init(s)]
            init = [_Suffix(suffix, True).visit(s) for s in init]
            forward = methods["forward"]
            params = [a for a in forward.args.args[1:] + forward.args.kwonlyargs]
            body = [ast.Assign([ast.Name(f"out_{suffix}", ast.Store())], ast.Constant(None), lineno=0)]
            body += [_Suffix(suffix, False).visit(s) for s in forward.body]
            body.append(ast.If(ast.Attribute(ast.Name("self", ast.Load()), f"exit_{suffix}", ast.Load()),
                               [ast.Return(ast.Name(f"out_{suffix}", ast.Load()))], []))
            others = []
            for name, method in methods.items():
                if name not in ("__init__", "forward") and not name.startswith("__"):
                    method = _Suffix(suffix, True).visit(method)
                    method.name = f"{name}_{suffix}"
                    others.append(method)
            yield imports, init, body, others, params


def forward(zoo: Path, lines: int) -> str:
    imports: dict[str, None] = {}
    init: list[ast.stmt] = []
    body: list[ast.stmt] = []
    others: list[ast.FunctionDef] = []
    params: dict[str, None] = {}
    count = 0
    for block_imports, block_init, block_body, block_others, block_params in _blocks(zoo):
        if count >= lines:
            break
        imports.update(dict.fromkeys(block_imports))
        init += block_init
        body += block_body
        others += block_others
        params.update(dict.fromkeys(a.arg for a in block_params))
        count += sum(_lines(ast.unparse(node)) + 1 for node in (*block_init, *block_body, *block_others))
    arguments = ", ".join(["self"] + [f"{name}=None" for name in params] + ["**kwargs"])
    head = "".join(line + "\n" for line in imports)
    init_text = ast.unparse(ast.FunctionDef("__init__", ast.arguments([], [ast.arg("self"), ast.arg("config")], None, [], [], None, []),
                                            [ast.parse("super().__init__()").body[0], *init], [], None, lineno=0))
    forward_text = f"def forward({arguments}):\n" + "".join(
        "    " + line + "\n" for node in body for line in ast.unparse(node).splitlines())
    methods = "\n\n".join(ast.unparse(m) for m in others)
    members = "\n\n".join([init_text, forward_text, methods])
    return head + "\n\nclass BigModel(nn.Module):\n" + "".join("    " + line + "\n" if line else "\n"
                                                                 for line in members.splitlines())


BUILDERS = {"classes": classes, "forward": forward, "functions": functions}


def build(shape: str, lines: int, zoo: Path = Path("hf_models")) -> str:
    """The text of a file of `shape` with at least `lines` lines (see the module's docstring)."""
    text = BUILDERS[shape](zoo, lines)
    ast.parse(text)  # a generated file must parse: the bench measures analysis, not syntax errors
    return text


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("shape", choices=SHAPES)
    parser.add_argument("lines", type=int)
    parser.add_argument("out", type=Path)
    parser.add_argument("--zoo", type=Path, default=Path("hf_models"))
    args = parser.parse_args(argv)
    text = build(args.shape, args.lines, args.zoo)
    atomic_write_text(args.out, text)
    print(f"{args.out}: {_lines(text)} lines, {len(text.encode()) / 1e6:.2f} MB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
