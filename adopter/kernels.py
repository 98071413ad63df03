"""Kernels that patched model code calls (the rules' `adopter.kernels.*` targets).

Imported only by patched models, never by the CLI, so it may import torch. Each fused
module *refers* to the layers it fuses instead of owning copies of their parameters:
the layers stay where they were, the `state_dict` keeps its keys, and `.to()`,
`deepcopy` and weight initialisation see the same parameters as before. When the
fusion does not hold at run time (training mode, another activation, an input shape
the folding does not cover), the module runs the original layers, so the function is
always the original one.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn
from torch.nn.utils.fusion import fuse_conv_bn_weights, fuse_linear_bn_weights


def _can_fold(bn: nn.Module, kind: type) -> bool:
    return (isinstance(bn, kind) and not bn.training and bn.track_running_stats
            and bn.running_mean is not None and bn.running_var is not None)


class FusedConvBatchNorm2d(nn.Module):
    """`bn(conv(x))`, one convolution with the norm folded into its weights in eval mode."""

    def __init__(self, conv: nn.Module, bn: nn.Module):
        super().__init__()
        self._layers = (conv, bn)  # a tuple is not registered: the parameters stay with the layers

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        conv, bn = self._layers
        if not (isinstance(conv, nn.Conv2d) and _can_fold(bn, nn.BatchNorm2d)):
            return bn(conv(x))
        weight, bias = fuse_conv_bn_weights(conv.weight, conv.bias, bn.running_mean, bn.running_var, bn.eps,
                                            bn.weight, bn.bias)
        return conv._conv_forward(x, weight, bias)


class FusedLinearBatchNorm1d(nn.Module):
    """`bn(linear(x))`, one matrix multiply with the norm folded in, in eval mode, for (N, C) inputs."""

    def __init__(self, linear: nn.Module, bn: nn.Module):
        super().__init__()
        self._layers = (linear, bn)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        linear, bn = self._layers
        if not (isinstance(linear, nn.Linear) and _can_fold(bn, nn.BatchNorm1d) and x.dim() == 2):
            return bn(linear(x))
        weight, bias = fuse_linear_bn_weights(linear.weight, linear.bias, bn.running_mean, bn.running_var, bn.eps,
                                              bn.weight, bn.bias)
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
    """`act(linear(x))`, with the bias add fused into the GELU when `act` is exact GELU."""
    if isinstance(linear, nn.Linear) and linear.bias is not None and _is_exact_gelu(act):
        return _bias_gelu(F.linear(x, linear.weight), linear.bias)
    return act(linear(x))


def load_renamed(module: nn.Module, renames: dict[str, str]) -> None:
    """Let `module` load a state_dict saved before a patch moved some parameters:
    keys `old` (relative to the module) are read as `new`."""

    def hook(state_dict, prefix, *args):
        for old, new in renames.items():
            if prefix + old in state_dict and prefix + new not in state_dict:
                state_dict[prefix + new] = state_dict.pop(prefix + old)

    module._register_load_state_dict_pre_hook(hook)
