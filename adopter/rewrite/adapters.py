"""What the rewriter must know about a kernel's API beyond the rule: how to build its
constructor arguments from the constructions it replaces, which parameters move
(state_dict keys to rename on load), and how a source call's arguments map onto a
kernel function's. A kernel without an entry takes the arguments its rule gives it.

Each adapter reads only the CST of the constructions and calls the match names, and
raises `Unsafe` when an argument has no faithful equivalent in the kernel's API.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import libcst as cst

from adopter.rewrite.spans import Unsafe

_EMPTY = cst.Module(body=[])


def code(node: cst.CSTNode) -> str:
    return _EMPTY.code_for_node(node).strip()


def argument(call: cst.Call, index: int, keyword: str) -> cst.BaseExpression | None:
    """The argument given at position `index` or as `keyword=`, if any."""
    positional = [a for a in call.args if a.keyword is None and not a.star]
    if any(a.star for a in call.args):
        raise Unsafe(f"`{code(call.func)}(...)` is called with *args or **kwargs")
    for a in call.args:
        if a.keyword is not None and a.keyword.value == keyword:
            return a.value
    return positional[index].value if index < len(positional) else None


def only_arguments(call: cst.Call, allowed: set[str], positional: int) -> None:
    names = {a.keyword.value for a in call.args if a.keyword is not None}
    extra = sorted(names - allowed)
    if extra or len([a for a in call.args if a.keyword is None]) > positional:
        what = f"argument `{extra[0]}`" if extra else "an extra positional argument"
        raise Unsafe(f"`{code(call.func)}(...)` has {what}, which the kernel does not take")


@dataclass(frozen=True)
class Construction:
    """A matched constructor call: its CST and the object it builds (`self.x`)."""

    call: cst.Call
    obj: str

    @property
    def attribute(self) -> str:
        if not self.obj.startswith("self.") or "[" in self.obj:
            raise Unsafe(f"{self.obj} is not a plain attribute, so its parameters cannot be renamed")
        return self.obj[len("self."):]


@dataclass(frozen=True)
class CtorPlan:
    arguments: str
    renames: dict[str, str]  # old state_dict key (relative to the module) -> new key


CtorAdapter = Callable[[dict[str, Construction], str], CtorPlan]  # (constructions by type, new attribute)


def fused_dropout_add_layer_norm(ctors: dict[str, Construction], new: str) -> CtorPlan:
    """epoi's FusedDropoutAddLayerNorm(size, dropout_prob, eps=1e-5) owns a `layer_norm`."""
    norm, drop = ctors["torch.nn.LayerNorm"], ctors["torch.nn.Dropout"]
    only_arguments(norm.call, {"normalized_shape", "eps", "elementwise_affine"}, positional=3)
    affine = argument(norm.call, 2, "elementwise_affine")
    if affine is not None and code(affine) != "True":
        raise Unsafe("LayerNorm without elementwise_affine: the kernel always has weight and bias")
    size, eps = argument(norm.call, 0, "normalized_shape"), argument(norm.call, 1, "eps")
    if size is None:
        raise Unsafe("LayerNorm without a normalized_shape")
    only_arguments(drop.call, {"p", "inplace"}, positional=2)
    p = argument(drop.call, 0, "p")
    text = f"{code(size)}, {code(p) if p is not None else '0.5'}" + (f", eps={code(eps)}" if eps is not None else "")
    return CtorPlan(text, {f"{norm.attribute}.{k}": f"{new}.layer_norm.{k}" for k in ("weight", "bias")})


CTOR_ADAPTERS: dict[str, CtorAdapter] = {
    "epoi.ops.torchscript_ops.FusedDropoutAddLayerNorm": fused_dropout_add_layer_norm,
}


def xformers_softmax(call: cst.Call) -> list[cst.Arg]:
    """`softmax(x, dim=-1[, dtype=d])` -> `softmax(x[.to(d)])`: the kernel normalises the last
    dimension and has no dtype argument (F.softmax casts its input first, so `.to(d)` is the same)."""
    x = argument(call, 0, "input")
    dim = argument(call, 1, "dim")
    dtype = argument(call, 2, "dtype")
    only_arguments(call, {"input", "dim", "dtype"}, positional=3)
    if x is None or dim is None or code(dim) != "-1":
        where = f"dim={code(dim)}" if dim is not None else "an implicit dim"
        raise Unsafe(f"softmax over {where}: the kernel normalises the last dimension (dim=-1) only")
    if dtype is not None:
        if not isinstance(x, (cst.Name, cst.Attribute, cst.Call, cst.Subscript)):
            x = x.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])
        x = cst.Call(func=cst.Attribute(value=x, attr=cst.Name("to")), args=[cst.Arg(dtype)])
    return [cst.Arg(x)]


CALL_ADAPTERS: dict[str, Callable[[cst.Call], list[cst.Arg]]] = {
    "xformers.triton.softmax.softmax": xformers_softmax,
}
