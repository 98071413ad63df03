"""Kernel sets: which kernel each rule's target names, per `--kernels` choice.

- `paper`: the rules' own targets (epoi, xFormers), what the paper evaluated; those
  packages are not installable today, so only `make verify`'s reference copies run them.
- `torch`: every target mapped onto code that runs with PyTorch alone (adopter/kernels*.py).
  The adapters of a paper kernel (adopter/rewrite/adapters.py) apply to its replacement, which
  keeps the paper kernel's API.
- `default` (what `adopter apply` uses): the `torch` kernels that the model benchmark
  (`make bench-gpu`, `make bench-models`) showed to make models faster or smaller; the
  others are reported as not rewritten, with the measurement that left them out.
"""

from __future__ import annotations

from dataclasses import dataclass

from adopter.rewrite.spans import Unsafe

PAPER = "paper"
TORCH = "torch"
DEFAULT = "default"
LEFT_OUT = "left out of the default kernel set: "  # how such a refusal's reason starts


@dataclass(frozen=True)
class Left:
    """A target the set does not rewrite, and why."""

    reason: str


_TORCH: dict[str, str | Left] = {
    "xformers.triton.softmax.softmax": "adopter.kernels.softmax_last_dim",
    "epoi.ops.torchscript_ops.FusedDropoutAddLayerNorm": "adopter.kernels.DropoutAddLayerNorm",
    "epoi.ops.xformers_attn.BertSelfAttentionWithXF": "adopter.kernels.attention.BertSelfAttentionSDPA",
    "epoi.ops.xformers_attn.GPT2AttentionWithXF": "adopter.kernels.attention.GPT2AttentionSDPA",
    "epoi.ops.xformers_attn.T5Attention": "adopter.kernels.attention.T5AttentionSDPA",
}

# Measured with `make bench-gpu` on one H100 (base sizes, batch 16, 512 tokens, bf16
# autocast, training samples/s against the unpatched model in the same run); docs/benchmarks.md
# has the tables.
_NO_GAIN: dict[str, str] = {
    "xformers.triton.softmax.softmax":
        LEFT_OUT + "PyTorch's softmax is the kernel eager code already runs "
        "(training 0.81-1.05x on H100)",
    "epoi.ops.torchscript_ops.FusedDropoutAddLayerNorm":
        LEFT_OUT + "no gain without torch.compile (training 0.98-1.00x on H100)",
    "epoi.ops.xformers_attn.T5Attention":
        LEFT_OUT + "SDPA with T5's learned bias as a mask is slower "
        "(training 0.69-0.88x on H100)",
    "adopter.kernels.linear_bias_act":
        LEFT_OUT + "slower and larger (training 0.90-0.93x, memory +6% on H100)",
    "adopter.kernels.FusedConvBatchNorm2d":
        LEFT_OUT + "no gain (ResNet inference 1.10x latency on H100)",
    "adopter.kernels.FusedLinearBatchNorm1d":
        LEFT_OUT + "not measured (no benchmark model has it), folds like conv_batchnorm",
    "adopter.kernels.rms_normalize":
        LEFT_OUT + "mixed results (T5 training 0.85-1.03x on H100)",
    # tanh_gelu's one zoo model is not one of the nine: `python -m evaluation.patch_zoo --kernels
    # torch --models bloom`, then `python -m evaluation.bench.models --device cpu --models bloom
    # --no-compile --repeats 3` (small sizes), medians against vanilla
    "torch.nn.functional.gelu":
        LEFT_OUT + "not shown to help (Bloom on CPU: training 1.01x, inference latency 1.12x; "
        "not measured on a GPU)",
}

# Kept in `default` because the benchmark showed a gain: the SDPA modules of BERT and GPT-2
# (above) and `adopter.kernels.sdpa_attention`, the guarded manual_attention rewrite (H100:
# RoBERTa training 1.47-1.83x, memory 0.54x, latency 0.39x; BERT 1.77x, 0.53x, 0.39x).

KERNEL_SETS: dict[str, dict[str, str | Left]] = {
    PAPER: {},
    TORCH: _TORCH,
    DEFAULT: {**_TORCH, **{target: Left(reason) for target, reason in _NO_GAIN.items()}},
}


def kernel_for(qname: str, kernels: str) -> str:
    """The name to emit for the rule target `qname` in the kernel set `kernels`
    (raises Unsafe, so the match is reported and left alone, when the set leaves it out)."""
    replacement = KERNEL_SETS[kernels].get(qname, qname)
    if isinstance(replacement, Left):
        raise Unsafe(replacement.reason)
    return replacement
