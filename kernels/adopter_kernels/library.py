"""Kernels from a maintained library (Liger-Kernel: Triton, CUDA only), each with what it supports.

A `LibraryKernel` names one function of the library and declares where it runs: device
types, dtypes, training (gradients through it) and inference, inside `torch.compile`, and
the widest last dimension it takes. `supports(*tensors)` says, at run time, whether one call
may use it; the kernels of `kernels/adopter_kernels/__init__.py` run PyTorch's own ops when it does
not (on CPU, without the library or Triton, in another dtype, under `torch.compile`, ...).
Nothing here computes anything itself: what the library does is not written again.

Liger-Kernel is optional: `pip install --no-deps liger-kernel==0.8.5` (the `liger` extra of
pyproject.toml) beside a CUDA build of torch, which brings its own Triton; never an unpinned
torch. It is imported the first time a call could use it (a CUDA tensor, outside
`torch.compile`), once; when it or Triton cannot be imported, the kernel is unavailable and
says why (`unavailable_reason`).
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass, field

import torch

_FLOATS = frozenset({torch.float32, torch.float16, torch.bfloat16})


@dataclass(frozen=True)
class LibraryKernel:
    """One library function and the conditions it is declared to hold under."""

    module: str                       # where the function lives, e.g. liger_kernel.ops.swiglu
    name: str                         # a torch.autograd.Function (called through `.apply`) or a function
    devices: frozenset[str]           # torch device types (`tensor.device.type`)
    dtypes: frozenset[torch.dtype]    # every tensor argument in one of these, all the same
    training: bool                    # gradients flow through it (autograd)
    inference: bool                   # runs where no gradient is wanted
    compile: bool                     # may be called inside torch.compile
    max_last_dim: int | None = None   # the widest last dimension it takes
    _loaded: dict = field(default_factory=dict, init=False, compare=False, repr=False)  # "fn" or "error", once tried

    def supports(self, *tensors: torch.Tensor) -> bool:
        """Whether this call may use the kernel: same shape, dtype and device for every tensor,
        each declared supported, and the library importable."""
        if torch.compiler.is_compiling() and not self.compile:
            return False  # decided first: under torch.compile nothing below is traced
        first = tensors[0]
        if first.device.type not in self.devices or first.dtype not in self.dtypes or first.numel() == 0:
            return False
        if any(t.shape != first.shape or t.dtype != first.dtype or t.device != first.device for t in tensors[1:]):
            return False
        if self.max_last_dim is not None and first.shape[-1] > self.max_last_dim:
            return False
        wants_grad = torch.is_grad_enabled() and any(t.requires_grad for t in tensors)
        if not (self.training if wants_grad else self.inference):
            return False
        return self.function() is not None

    def function(self):
        """The library's callable, or None when it cannot be imported (the reason is kept)."""
        if "fn" not in self._loaded and "error" not in self._loaded:
            try:
                found = getattr(importlib.import_module(self.module), self.name)
            except Exception as error:  # ImportError, or Triton failing to start without a GPU driver
                self._loaded["error"] = f"{self.module}.{self.name}: {type(error).__name__}: {error}"
            else:
                self._loaded["fn"] = found.apply if isinstance(found, type) else found
        return self._loaded.get("fn")

    def unavailable_reason(self) -> str | None:
        """Why the library function cannot be used here (None when it can, or was not tried)."""
        return self._loaded.get("error")

    def __call__(self, *args):
        return self.function()(*args)


# Liger-Kernel 0.8.5 (liger_kernel/ops/swiglu.py, geglu.py): `silu(a) * b` and
# `gelu_tanh(a) * b` in one Triton kernel each way (the backward recomputes the activation
# instead of saving it); the activation is computed in float32. Rows up to 65536 wide
# (`calculate_settings`). torch.compile: declared False, so a compiled model runs PyTorch's
# ops, which Inductor fuses into one kernel itself (not measured yet with Liger's kernels
# inside a compiled graph).
SILU_MUL = LibraryKernel("liger_kernel.ops.swiglu", "LigerSiLUMulFunction", devices=frozenset({"cuda"}),
                         dtypes=_FLOATS, training=True, inference=True, compile=False, max_last_dim=65536)
GELU_TANH_MUL = LibraryKernel("liger_kernel.ops.geglu", "LigerGELUMulFunction", devices=frozenset({"cuda"}),
                              dtypes=_FLOATS, training=True, inference=True, compile=False, max_last_dim=65536)

# Liger-Kernel 0.8.5 (liger_kernel/ops/rope.py): RoPE with the rotated halves (Llama's
# `rotate_half`), queries and keys in one Triton kernel, forward and backward from cos and sin.
# It takes q and k as (batch, heads, seq, head_dim), cos/sin as (batch or 1, seq, rotary_dim) (or
# with a head dimension of 1 at `unsqueeze_dim`), writes into q and k where their transposed
# layout is contiguous, and returns no gradient for cos and sin. What a call must fit beyond
# devices and dtypes is `rope_call_fits` below; torch.compile: declared False, as for the others.
ROPE = LibraryKernel("liger_kernel.ops.rope", "LigerRopeFunction", devices=frozenset({"cuda"}), dtypes=_FLOATS,
                     training=True, inference=True, compile=False)


def rope_call_fits(x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> bool:
    """What LigerRopeFunction declares beyond device and dtype, for one tensor `x` rotated by its
    full last dimension: x of (batch, heads, seq, head_dim) with an even head_dim; cos and sin of
    one shape, x's dtype and device, (1 or batch, 1, seq, head_dim) or (1 or batch, seq, head_dim)
    (the same for every head); no gradient wanted for cos and sin (the kernel returns none)."""
    if x.dim() != 4 or x.shape[-1] % 2 or cos.shape != sin.shape:
        return False
    if any(t.dtype != x.dtype or t.device != x.device for t in (cos, sin)):
        return False
    if torch.is_grad_enabled() and (cos.requires_grad or sin.requires_grad):
        return False
    batch, _heads, seq, dim = x.shape
    shape = tuple(cos.shape)
    return shape in {(1, 1, seq, dim), (batch, 1, seq, dim), (1, seq, dim), (batch, seq, dim)}


# Liger-Kernel 0.8.5 (liger_kernel/ops/group_norm.py): group norm in one Triton kernel each way,
# the statistics per (sample, group) over the group's channels and positions; it takes the
# affine weight and bias (both), the input as (batch, channels, *) with at least 3 dimensions.
GROUP_NORM = LibraryKernel("liger_kernel.ops.group_norm", "LigerGroupNormFunction", devices=frozenset({"cuda"}),
                           dtypes=_FLOATS, training=True, inference=True, compile=False)


def group_norm_call_fits(norm, x: torch.Tensor) -> bool:
    """What LigerGroupNormFunction declares beyond device and dtype: an `nn.GroupNorm` (exactly:
    a subclass may compute something else) with affine weight and bias in x's dtype and device,
    x of (batch, num_channels, *) with at least 3 dimensions, channels divisible by groups."""
    if type(norm) is not torch.nn.GroupNorm or not norm.affine or norm.weight is None or norm.bias is None:
        return False
    if x.dim() < 3 or x.shape[1] != norm.num_channels or norm.num_channels % norm.num_groups:
        return False
    return all(p.dtype == x.dtype and p.device == x.device for p in (norm.weight, norm.bias))
