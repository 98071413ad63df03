"""What the rewriter must know about a kernel's API beyond the rule: how to build its
constructor arguments from the constructions it replaces, which parameters move
(state_dict keys to rename on load), and how a source call's arguments map onto a
kernel function's. A kernel without an entry takes the arguments its rule gives it.

Each adapter reads only the CST of the constructions and calls the match names, binds their
arguments by the signatures of the catalogue (adopter/catalogue/), and raises `Unsafe` when an
argument has no faithful equivalent in the kernel's API.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import libcst as cst

from adopter.catalogue import Signature, call_signature, constructors
from adopter.rewrite.unsafe import Unsafe

_EMPTY = cst.Module(body=[])


def code(node: cst.CSTNode) -> str:
    return _EMPTY.code_for_node(node).strip()


def bind(call: cst.Call, signature: Signature | None) -> dict[str, cst.BaseExpression]:
    """The arguments of `call` by parameter name, bound as Python binds them to `signature`
    (from the catalogue, adopter/catalogue/); Unsafe for `*args`/`**kwargs`, a positional
    argument beyond the signature's, a keyword it lacks, or a call without a signature."""
    what = code(call.func)
    if signature is None:
        raise Unsafe(f"`{what}(...)`: the catalogue has no signature for it, so its arguments cannot be mapped")
    if any(a.star for a in call.args):
        raise Unsafe(f"`{what}(...)` is called with *args or **kwargs")
    positional = [a for a in call.args if a.keyword is None]
    if len(positional) > len(signature.positional):
        raise Unsafe(f"`{what}(...)` has {len(positional)} positional arguments; {signature.name} takes "
                     f"{len(signature.positional)}")
    bound = {name: a.value for name, a in zip(signature.positional, positional)}
    for a in call.args:
        if a.keyword is not None:
            if not signature.accepts(a.keyword.value):
                raise Unsafe(f"`{what}(...)` has argument `{a.keyword.value}`, which {signature.name} does not take")
            bound[a.keyword.value] = a.value
    return bound


def only(call: cst.Call, bound: dict[str, cst.BaseExpression], allowed: set[str], signature: Signature) -> None:
    """Unsafe when the call passes a parameter outside `allowed`: the kernel does not take it."""
    extra = [name for name in (*signature.positional, *sorted(signature.keyword_only)) if name in bound
             and name not in allowed]
    if extra:
        where = (f" (argument {signature.positional.index(extra[0]) + 1})" if extra[0] in signature.positional else "")
        raise Unsafe(f"`{code(call.func)}(...)` passes `{extra[0]}`{where}, which the kernel does not take")


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
    norm_signature, drop_signature = constructors().get("torch.nn.LayerNorm"), constructors().get("torch.nn.Dropout")
    norm_args = bind(norm.call, norm_signature)
    only(norm.call, norm_args, {"normalized_shape", "eps", "elementwise_affine"}, norm_signature)
    affine = norm_args.get("elementwise_affine")
    if affine is not None and code(affine) != "True":
        raise Unsafe("LayerNorm without elementwise_affine: the kernel always has weight and bias")
    size, eps = norm_args.get("normalized_shape"), norm_args.get("eps")
    if size is None:
        raise Unsafe("LayerNorm without a normalized_shape")
    drop_args = bind(drop.call, drop_signature)
    only(drop.call, drop_args, {"p", "inplace"}, drop_signature)
    p = drop_args.get("p")
    text = f"{code(size)}, {code(p) if p is not None else '0.5'}" + (f", eps={code(eps)}" if eps is not None else "")
    return CtorPlan(text, {f"{norm.attribute}.{k}": f"{new}.layer_norm.{k}" for k in ("weight", "bias")})


CTOR_ADAPTERS: dict[str, CtorAdapter] = {
    "epoi.ops.torchscript_ops.FusedDropoutAddLayerNorm": fused_dropout_add_layer_norm,
}


def xformers_softmax(call: cst.Call, source: Signature | None) -> list[cst.Arg]:
    """`softmax(x, dim=-1[, dtype=d])` -> `softmax(x[.to(d)])`: the kernel normalises the last
    dimension and has no dtype argument (F.softmax casts its input first, so `.to(d)` is the same).
    The call's arguments are bound by `source`, the signature of the function it calls."""
    bound = bind(call, source)
    only(call, bound, {"input", "dim", "dtype"}, source)
    x, dim, dtype = bound.get("input"), bound.get("dim"), bound.get("dtype")
    if x is None or dim is None or code(dim) != "-1":
        where = f"dim={code(dim)}" if dim is not None else "an implicit dim"
        raise Unsafe(f"softmax over {where}: the kernel normalises the last dimension (dim=-1) only")
    if dtype is not None:
        if not isinstance(x, (cst.Name, cst.Attribute, cst.Call, cst.Subscript)):
            x = x.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])
        x = cst.Call(func=cst.Attribute(value=x, attr=cst.Name("to")), args=[cst.Arg(dtype)])
    return [cst.Arg(x)]


def source_signature(callees: tuple[str, ...]) -> Signature | None:
    """The signature the callees a pattern node names share (None: one has none, or they differ)."""
    first, *others = [call_signature(callee) for callee in callees]
    same = all(s is not None and (s.positional, s.keyword_only) == (first.positional, first.keyword_only) for s in others)
    return first if first is not None and same else None


CallAdapter = Callable[[cst.Call, Signature | None], list[cst.Arg]]  # (the call, its callee's signature)

CALL_ADAPTERS: dict[str, CallAdapter] = {
    "xformers.triton.softmax.softmax": xformers_softmax,
}
