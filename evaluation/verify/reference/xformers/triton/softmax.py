"""Reference for `xformers.triton.softmax.softmax(a, mask=None, causal=False)`: a softmax
over the last dimension, after adding an optional additive mask and, with `causal`,
masking the upper triangle."""

from __future__ import annotations

import torch


def softmax(a: torch.Tensor, mask: torch.Tensor | None = None, causal: bool = False) -> torch.Tensor:
    if mask is not None:
        a = a + mask
    if causal:
        rows, cols = a.shape[-2], a.shape[-1]
        upper = torch.ones(rows, cols, dtype=torch.bool, device=a.device).triu(1)
        a = a.masked_fill(upper, float("-inf"))
    return torch.softmax(a, dim=-1)
