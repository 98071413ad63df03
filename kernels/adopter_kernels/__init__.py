"""Kernels that patched model code calls (the rules' `adopter_kernels.*` targets).

Imported only by patched models, never by the CLI, so it may import torch. Each fused
module *refers* to the layers it fuses instead of owning copies of their parameters:
the layers stay where they were, the `state_dict` keeps its keys, and `.to()`,
`deepcopy` and weight initialisation see the same parameters as before. When the
fusion does not hold at run time (training mode, gradients enabled, another
activation, an input shape the folding does not cover), the module runs the original
layers, so the function is always the original one. Folded weights are cached and
recomputed when any of the layers' tensors changes. Kernels of a maintained library
(Liger-Kernel, optional) are used through `kernels/adopter_kernels/library.py`, which declares what
each supports; the PyTorch ops run wherever that does not hold.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn
from torch.nn.utils.fusion import fuse_conv_bn_weights, fuse_linear_bn_weights

from adopter_kernels.library import (GELU_TANH_MUL, GROUP_NORM, ROPE, SILU_MUL, LibraryKernel, group_norm_call_fits,
                                    rope_call_fits)

__version__ = "0.1.0"  # the distribution's (kernels/pyproject.toml)


def _can_fold(bn: nn.Module, kind: type) -> bool:
    return (isinstance(bn, kind) and not bn.training and bn.track_running_stats
            and bn.running_mean is not None and bn.running_var is not None)


def _versions(*tensors) -> tuple:
    """Identity and in-place version of each tensor: any change to the weights (a load,
    an optimizer step, `.to()`) changes this key, so folded weights are recomputed."""
    return tuple((id(t), t._version, t.device, t.dtype) if t is not None else None for t in tensors)


def _keep_layers() -> bool:
    """Run the layers unfolded: when gradients are wanted (the fold is for inference), and
    inside torch.compile, where the cache of folded weights (new Parameters, keyed by tensor
    identity and version) would break the graph: the compiled graph is then the original's."""
    return torch.is_grad_enabled() or torch.compiler.is_compiling()


class _Folded:
    """Folded weights, reused while the layers' tensors are unchanged (eval-mode inference)."""

    def __init__(self):
        self.key, self.value = None, None

    def get(self, layer: nn.Module, bn: nn.Module, fuse) -> tuple[torch.Tensor, torch.Tensor]:
        """`fuse` (torch's fuse_conv_bn_weights or fuse_linear_bn_weights) of `layer` and `bn`."""
        key = _versions(layer.weight, layer.bias, bn.running_mean, bn.running_var, bn.weight, bn.bias)
        if key != self.key:
            with torch.no_grad():
                self.value = fuse(layer.weight, layer.bias, bn.running_mean, bn.running_var, bn.eps,
                                  bn.weight, bn.bias)
            self.key = key
        return self.value


class FusedConvBatchNorm2d(nn.Module):
    """`bn(conv(x))`, one convolution with the norm folded into its weights in eval mode."""

    def __init__(self, conv: nn.Module, bn: nn.Module):
        super().__init__()
        self._layers = (conv, bn)  # a tuple is not registered: the parameters stay with the layers
        self._folded = _Folded()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        conv, bn = self._layers
        if not (isinstance(conv, nn.Conv2d) and _can_fold(bn, nn.BatchNorm2d)) or _keep_layers():
            return bn(conv(x))  # training, gradients wanted, or torch.compile: the layers as they are
        weight, bias = self._folded.get(conv, bn, fuse_conv_bn_weights)
        return conv._conv_forward(x, weight, bias)


class FusedLinearBatchNorm1d(nn.Module):
    """`bn(linear(x))`, one matrix multiply with the norm folded in, in eval mode, for (N, C) inputs."""

    def __init__(self, linear: nn.Module, bn: nn.Module):
        super().__init__()
        self._layers = (linear, bn)
        self._folded = _Folded()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        linear, bn = self._layers
        if not (isinstance(linear, nn.Linear) and _can_fold(bn, nn.BatchNorm1d) and x.dim() == 2) or _keep_layers():
            return bn(linear(x))
        weight, bias = self._folded.get(linear, bn, fuse_linear_bn_weights)
        return F.linear(x, weight, bias)


def _bias_gelu(y: torch.Tensor, bias: torch.Tensor) -> torch.Tensor:
    # the bias add and the exact GELU as one expression, which torch.compile fuses into one
    # kernel; in eager mode it costs what the original two ops cost
    return F.gelu(y + bias)


def _is_exact_gelu(act) -> bool:
    if isinstance(act, nn.GELU):
        return act.approximate == "none"
    try:
        from transformers.activations import GELUActivation
    except ImportError:
        return False
    return type(act) is GELUActivation and getattr(act, "act", None) is F.gelu


def linear_bias_act(linear: nn.Module, act, x: torch.Tensor) -> torch.Tensor:
    """`act(linear(x))`, with the bias add fused into the GELU when `act` is exact GELU. A Linear
    with forward hooks is called as it is: reading its weight directly would skip them (graphormer's
    `quant_noise` adds noise to the weight in a forward pre-hook)."""
    if (isinstance(linear, nn.Linear) and linear.bias is not None and _is_exact_gelu(act)
            and not (linear._forward_pre_hooks or linear._forward_hooks)):
        return _bias_gelu(F.linear(x, linear.weight), linear.bias)
    return act(linear(x))


def _transformers_activation(act, name: str) -> bool:
    """`act` is exactly transformers' activation class `name` (read by name: no import of transformers)."""
    return type(act).__name__ == name and type(act).__module__ == "transformers.activations"


def _gated_kernel(act) -> LibraryKernel | None:
    """The library kernel computing `act(a) * b` in one pass, for the activations it covers:
    SiLU (transformers' `silu`/`swish`), and GELU's tanh approximation (`gelu_pytorch_tanh`).
    Exact types only: a subclass may compute something else."""
    if act is F.silu or type(act) is nn.SiLU or _transformers_activation(act, "SiLUActivation"):
        return SILU_MUL
    if (type(act) is nn.GELU and act.approximate == "tanh") or _transformers_activation(act, "PytorchGELUTanh"):
        return GELU_TANH_MUL
    return None


def gated_act(gate: nn.Module, up: nn.Module, act, x: torch.Tensor) -> torch.Tensor:
    """`act(gate(x)) * up(x)`, the gated half of a GLU MLP (SwiGLU when `act` is SiLU, GeGLU
    when it is GELU): the two projections as they are, then the activation and the product
    in one library kernel (Liger-Kernel's SiLU-mul or tanh-GELU-mul) where the activation is
    one it covers and the call is one it supports (`kernels/adopter_kernels/library.py`: CUDA,
    float32/float16/bfloat16, not under torch.compile, the library installed); otherwise, as
    on CPU, PyTorch's ops, exactly the original ones."""
    return gated_act_mul(act, gate(x), up(x))


def gated_silu(gate: nn.Module, up: nn.Module, x: torch.Tensor) -> torch.Tensor:
    """`F.silu(gate(x)) * up(x)`: `gated_act` with the SiLU function."""
    return gated_act(gate, up, F.silu, x)


def silu_mul(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """`F.silu(a) * b`: `gated_act_mul` with the SiLU function."""
    return gated_act_mul(F.silu, a, b)


def gated_act_mul(act, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """`act(a) * b`, the activation and the product of a GLU whose gate `a` and other operand `b`
    are given (swiglu's chunked shape passes the two halves of one projection, strided views):
    in one library kernel where `gated_act` would use one; otherwise, as on CPU, PyTorch's
    ops, exactly the original ones."""
    kernel = _gated_kernel(act)
    if kernel is not None and kernel.supports(a, b):
        return kernel(a, b)
    return act(a) * b


def group_norm_silu(norm: nn.Module, x: torch.Tensor) -> torch.Tensor:
    """`F.silu(norm(x))` for an `nn.GroupNorm` norm: the norm through Liger-Kernel's group norm
    (LigerGroupNormFunction, reading the module's own weight and bias) where the call is one it
    declares support for (`kernels/adopter_kernels/library.py`: CUDA, float32/float16/bfloat16, affine,
    (batch, channels, *) input, not under torch.compile, the library installed), then SiLU;
    otherwise, as on CPU, exactly the original ops."""
    return group_norm_act(norm, F.silu, x)


def group_norm_act(norm: nn.Module, act, x: torch.Tensor) -> torch.Tensor:
    """`act(norm(x))` for an `nn.GroupNorm` norm and any activation (a module diffusers'
    `get_activation` chose, or a function): the norm as `group_norm_silu` runs it, then `act`
    as it is."""
    if GROUP_NORM.supports(x) and group_norm_call_fits(norm, x):
        return act(GROUP_NORM(x, norm.weight, norm.bias, norm.num_channels, norm.num_groups, norm.eps))
    return act(norm(x))


def _rotate_half(x: torch.Tensor) -> torch.Tensor:
    """`rotate_half` as transformers writes it: the halves of the last dimension, `(-x2, x1)`."""
    x1 = x[..., : x.shape[-1] // 2]
    x2 = x[..., x.shape[-1] // 2 :]
    return torch.cat((-x2, x1), dim=-1)


def apply_rotary(x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
    """`(x * cos) + (rotate_half(x) * sin)`, rotary position embeddings applied to one tensor:
    Liger-Kernel's RoPE (LigerRopeFunction) where the call is one it declares support for
    (`kernels/adopter_kernels/library.py`: CUDA, float32/float16/bfloat16, x of (batch, heads, seq,
    head_dim), cos/sin of the full head_dim, not under torch.compile, the library installed);
    otherwise, as on CPU, exactly the original ops. The library rotates a query and a key
    together and writes into them: x goes in as a copy (so the caller's tensor is not changed),
    beside a key of one head of zeros whose result is dropped."""
    if ROPE.supports(x) and rope_call_fits(x, cos, sin):
        batch, _heads, seq, dim = x.shape
        q = x.transpose(1, 2).clone(memory_format=torch.contiguous_format).transpose(1, 2)
        k = x.new_zeros(batch, 1, seq, dim)
        rotated, _ = ROPE(q, k, cos, sin)
        return rotated
    return (x * cos) + (_rotate_half(x) * sin)


def load_renamed(module: nn.Module, renames: dict[str, str], save_original: bool = False) -> None:
    """Let `module` load a state_dict saved before a patch moved some parameters:
    keys `old` (relative to the module) are read as `new`. With `save_original`, its
    `state_dict()` also names them `old` again, so checkpoints stay readable by the
    unpatched model."""

    def hook(state_dict, prefix, *args):
        for old, new in renames.items():
            if prefix + old in state_dict and prefix + new not in state_dict:
                state_dict[prefix + new] = state_dict.pop(prefix + old)

    module._register_load_state_dict_pre_hook(hook)
    if save_original:
        def save_hook(_module, state_dict, prefix, _metadata):
            for old, new in renames.items():
                if prefix + new in state_dict:
                    state_dict[prefix + old] = state_dict.pop(prefix + new)

        module.register_state_dict_post_hook(save_hook)


def softmax_last_dim(x: torch.Tensor) -> torch.Tensor:
    """PyTorch's softmax over the last dimension. No kernel set emits it any more (it is the op the
    code already runs); kept so that files patched by earlier versions still import."""
    return torch.softmax(x, dim=-1)


class DropoutAddLayerNorm(nn.Module):
    """`layer_norm(dropout(x) + residual)` with epoi's `FusedDropoutAddLayerNorm` API (the
    parameters live in `self.layer_norm`), written as one expression that
    `torch.compile` fuses into a single kernel; without dropout it skips the dropout op."""

    def __init__(self, size, dropout_prob: float, eps: float = 1e-5):
        super().__init__()
        self.layer_norm = nn.LayerNorm(size, eps=eps)
        self.dropout_prob = dropout_prob

    def forward(self, x: torch.Tensor, residual: torch.Tensor) -> torch.Tensor:
        if self.training and self.dropout_prob > 0:
            x = F.dropout(x, self.dropout_prob, training=True)
        norm = self.layer_norm
        return F.layer_norm(x + residual, norm.normalized_shape, norm.weight, norm.bias, norm.eps)


def rms_normalize(x: torch.Tensor, eps: float, upcast: bool = False, dim=-1) -> torch.Tensor:
    """`x * rsqrt(mean(x.float() ** 2, dim, keepdim=True) + eps)`, the normalising half of a
    hand-written RMSNorm (the weight and the cast back stay in the caller), as PyTorch's
    single `rms_norm` kernel, computed in float32. The result is float32 with `upcast` (the
    original multiplies `x` by a float32 factor), else `x`'s dtype. `dim` is the one the
    original's mean is over (litgpt's RMSNorm takes it as a constructor argument): another
    single dimension is moved last for the kernel and back; several are computed as written."""
    h = x.float()
    if isinstance(dim, int) and not isinstance(dim, bool):
        last = dim in (-1, h.dim() - 1)
        out = F.rms_norm(h if last else h.movedim(dim, -1), (h.shape[dim],), eps=eps)
        out = out if last else out.movedim(-1, dim)
    else:
        out = h * torch.rsqrt(h.pow(2).mean(dim, keepdim=True) + eps)
    return out if upcast else out.to(x.dtype)


def sdpa_attention(query: torch.Tensor, key: torch.Tensor, value: torch.Tensor, mask: torch.Tensor | None,
                   divisor, dropout: nn.Dropout) -> torch.Tensor:
    """`dropout(softmax(query @ key.transpose(-1, -2) / divisor + mask)) @ value` as PyTorch's
    fused `scaled_dot_product_attention` (flash / memory-efficient kernels on CUDA): the
    attention probabilities are never materialised, so the caller must not need them."""
    p = dropout.p if dropout.training else 0.0
    if mask is not None and mask.is_floating_point() and mask.dtype != query.dtype:
        mask = mask.to(query.dtype)  # SDPA takes a float mask only in the query's dtype (as autocast would cast it)
    return F.scaled_dot_product_attention(query, key, value, attn_mask=mask, dropout_p=p, scale=1.0 / float(divisor))
