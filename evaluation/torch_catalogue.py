"""Generate adopter/catalogue/torch.tsv: the torch names a rule may call or construct, with their kind;
adopter/catalogue/inputs/torch.tsv: the position of each input a call may pass by keyword; and
adopter/catalogue/constructors/torch.tsv: each module class's constructor parameters.

Run in the verification environment, which has torch (`make catalogue`); the rule checker
(adopter/rules/typecheck.py) only reads the committed file, so rules are checked without torch, and
tests/rules/test_torch_catalogue.py (`make test-verify`) checks that the file equals a fresh run.

A name is `<namespace>.<attribute>` for the public namespaces below (what model code
imports), or `torch.Tensor.<method>` (how the analyses name a tensor method call). Kinds:
  module    a torch.nn.Module subclass (what an `init:` node constructs)
  class     any other class (`torch.Size`, `torch.nn.Parameter`)
  function  any other callable defined in torch (`torch.matmul`, `torch.nn.functional.softmax`)
  method    a callable attribute of torch.Tensor (`torch.Tensor.view`)
Attributes that are not callable (dtypes, constants, submodules) and callables that a
namespace only re-exports from outside torch (`typing.Optional`) are left out.

The inputs file lists, for each catalogued function and module whose signature Python can
read (a function written in Python, a module's `forward`), every parameter that may be passed
by position or by keyword, with its position (a module's without `self`) and its default where
that is a literal: a call `F.softmax(input=x, dim=-1)` gives the pattern's input 0 as `x`, and
`F.normalize(x, dim=-1)` has p = 2.0. Builtins of torch._C
(`torch.matmul`, `F.gelu`) have no readable signature and are not listed.

The constructors file lists, for each catalogued module class, the parameters of its
`__init__` (without `self`): position, or an empty position for a keyword-only one. A
rewrite that builds a kernel from a matched construction reads its arguments by these.
"""

from __future__ import annotations

import argparse
import inspect
import sys
from pathlib import Path

# the public namespaces model code calls into; a name elsewhere needs a rule's `extern:`
NAMESPACES = (
    "torch",
    "torch.nn",
    "torch.nn.functional",
    "torch.nn.init",
    "torch.nn.utils",
    "torch.nn.utils.rnn",
    "torch.nn.utils.parametrizations",
    "torch.linalg",
    "torch.fft",
    "torch.special",
    "torch.autograd",
    "torch.utils.checkpoint",
)
OUT = Path(__file__).resolve().parent.parent / "adopter" / "catalogue" / "torch.tsv"
INPUTS_OUT = OUT.parent / "inputs" / "torch.tsv"
CONSTRUCTORS_OUT = OUT.parent / "constructors" / "torch.tsv"


def _from_torch(obj) -> bool:
    module = getattr(obj, "__module__", None) or ""
    return module == "torch" or module.startswith("torch.")


def _kind(obj, torch) -> str | None:
    if inspect.isclass(obj):
        if not _from_torch(obj):
            return None
        return "module" if issubclass(obj, torch.nn.Module) else "class"
    if inspect.ismodule(obj) or not callable(obj):
        return None
    # builtins of torch._C report `torch` or no module at all; re-exports (typing, math) report theirs
    module = getattr(obj, "__module__", None)
    return "function" if module is None or _from_torch(obj) else None


def entries() -> list[tuple[str, str]]:
    """(qualified name, kind) for every catalogued name of the installed torch, sorted."""
    import importlib

    import torch

    found: dict[str, str] = {}
    for namespace in NAMESPACES:
        module = importlib.import_module(namespace)
        for attribute in dir(module):
            if attribute.startswith("_"):
                continue
            kind = _kind(getattr(module, attribute), torch)
            if kind is not None:
                found[f"{namespace}.{attribute}"] = kind
    for attribute in dir(torch.Tensor):
        if not attribute.startswith("_") and callable(getattr(torch.Tensor, attribute)):
            found[f"torch.Tensor.{attribute}"] = "method"
    return sorted(found.items())


def _positional_parameters(obj) -> list[inspect.Parameter]:
    """The parameters of `obj` that a call may pass by position or by keyword, in order ([] when
    Python cannot read its signature)."""
    try:
        signature = inspect.signature(obj)
    except (TypeError, ValueError):
        return []
    out = []
    for parameter in signature.parameters.values():
        if parameter.kind is not inspect.Parameter.POSITIONAL_OR_KEYWORD:
            break
        out.append(parameter)
    return out


def literal_default(parameter: inspect.Parameter) -> str:
    """The parameter's default as the analyses write a literal (its Python repr, as
    adopter/extract/python_facts.py's `constant`), or "" where it has none or it is no literal
    (an object, a tensor)."""
    value = parameter.default
    if value is inspect.Parameter.empty:
        return ""
    if value is None or type(value) in (bool, int, float, str):
        return repr(value)
    return ""


def inputs() -> list[tuple[str, str, int, str]]:
    """(qualified name, parameter, position, literal default or "") for the catalogued functions and modules."""
    import importlib

    rows = []
    for name, kind in entries():
        if kind not in ("function", "module"):
            continue
        namespace, attribute = name.rsplit(".", 1)
        obj = getattr(importlib.import_module(namespace), attribute)
        parameters = _positional_parameters(obj.forward)[1:] if kind == "module" else _positional_parameters(obj)  # (forward without self)
        rows += [(name, parameter.name, position, literal_default(parameter)) for position, parameter in enumerate(parameters)]
    return rows


def constructor_parameters() -> list[tuple[str, str, str]]:
    """(module class, parameter, position or "" for keyword-only) of each catalogued module's
    `__init__`, without `self`; a module whose signature Python cannot read is left out."""
    import importlib

    rows = []
    for name, kind in entries():
        if kind != "module":
            continue
        namespace, attribute = name.rsplit(".", 1)
        try:
            parameters = list(inspect.signature(getattr(importlib.import_module(namespace), attribute).__init__)
                              .parameters.values())[1:]
        except (TypeError, ValueError):
            continue
        position = 0
        for parameter in parameters:
            if parameter.kind in (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.POSITIONAL_ONLY):
                rows.append((name, parameter.name, str(position)))
                position += 1
            elif parameter.kind is inspect.Parameter.KEYWORD_ONLY:
                rows.append((name, parameter.name, ""))
    return rows


def render() -> str:
    import torch

    lines = [f"# generated by evaluation/torch_catalogue.py from torch {torch.__version__}: do not edit",
             "name\tkind", *(f"{name}\t{kind}" for name, kind in entries())]
    return "\n".join(lines) + "\n"


def render_inputs() -> str:
    import torch

    lines = [f"# generated by evaluation/torch_catalogue.py from torch {torch.__version__}: do not edit",
             "name\tparameter\tposition\tdefault",
             *(f"{name}\t{parameter}\t{position}\t{default}" for name, parameter, position, default in inputs())]
    return "\n".join(lines) + "\n"


def render_constructors() -> str:
    import torch

    lines = [f"# generated by evaluation/torch_catalogue.py from torch {torch.__version__}: do not edit",
             "name\tparameter\tposition", *("\t".join(row) for row in constructor_parameters())]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=OUT)
    parser.add_argument("--inputs-out", type=Path, default=INPUTS_OUT)
    parser.add_argument("--constructors-out", type=Path, default=CONSTRUCTORS_OUT)
    args = parser.parse_args(argv)
    for out, text, what in ((args.out, render(), "names"), (args.inputs_out, render_inputs(), "inputs"),
                            (args.constructors_out, render_constructors(), "constructor parameters")):
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(text, encoding="utf-8")
        print(f"wrote {out}: {text.count(chr(10)) - 2} {what}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
