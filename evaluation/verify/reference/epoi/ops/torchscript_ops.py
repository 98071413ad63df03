"""Reference for epoi's `epoi.ops.torchscript_ops` modules (constructor signatures and
parameter names as in epoi)."""

from __future__ import annotations

import torch
import torch.nn.functional as F


class FusedDropoutAddLayerNorm(torch.nn.Module):
    """`layer_norm(dropout(input1) + input2)`; the parameters live in `self.layer_norm`."""

    def __init__(self, size, dropout_prob, eps=1e-5, fused=True):
        super().__init__()
        self.layer_norm = torch.nn.LayerNorm(size, eps=eps)
        self.dropout_prob = dropout_prob
        self.fused = fused

    def forward(self, input1, input2):
        x = F.dropout(input1, self.dropout_prob, training=self.training) + input2
        return F.layer_norm(x, self.layer_norm.normalized_shape, self.layer_norm.weight, self.layer_norm.bias,
                            self.layer_norm.eps)


class FusedBiasGELU(torch.nn.Module):
    """`gelu(input + bias)`. epoi's fused path uses the tanh approximation (Megatron-LM's);
    this reference computes the exact GELU, epoi's `fused=False` path."""

    def __init__(self, size, device=None, dtype=None, prev_weight=None, fused=True):
        super().__init__()
        self.bias = torch.nn.Parameter(torch.zeros(size, device=device, dtype=dtype))
        self.fused = fused

    def forward(self, input):
        return F.gelu(input + self.bias)
