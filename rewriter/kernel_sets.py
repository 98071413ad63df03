"""Kernel sets: which kernel each rule's target names, per `--kernels` choice.

The rules name the paper's kernels (epoi, xFormers), so `paper` changes nothing: it is
what the paper evaluated, and those packages are not installable today. `torch` maps
every target onto code that runs with PyTorch alone (adopter/kernels*.py); a target with
no such kernel yet maps to None and its matches are reported, not rewritten. The
adapters of a paper kernel (rewriter/adapters.py) apply to its replacement, which keeps
the paper kernel's API.
"""

from __future__ import annotations

from rewriter.spans import Unsafe

PAPER = "paper"
TORCH = "torch"

KERNEL_SETS: dict[str, dict[str, str | None]] = {
    PAPER: {},
    TORCH: {
        "xformers.triton.softmax.softmax": "adopter.kernels.softmax_last_dim",
        "epoi.ops.torchscript_ops.FusedDropoutAddLayerNorm": "adopter.kernels.DropoutAddLayerNorm",
        "epoi.ops.xformers_attn.BertSelfAttentionWithXF": "adopter.kernels_attention.BertSelfAttentionSDPA",
        "epoi.ops.xformers_attn.GPT2AttentionWithXF": "adopter.kernels_attention.GPT2AttentionSDPA",
        "epoi.ops.xformers_attn.T5Attention": "adopter.kernels_attention.T5AttentionSDPA",
    },
}


def kernel_for(qname: str, kernels: str) -> str:
    """The name to emit for the rule target `qname` in the kernel set `kernels`."""
    table = KERNEL_SETS[kernels]
    if qname not in table:
        return qname
    replacement = table[qname]
    if replacement is None:
        raise Unsafe(f"the `{kernels}` kernel set has no kernel for {qname}")
    return replacement
