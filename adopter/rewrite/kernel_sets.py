"""Kernel sets: which kernel each rule's target names, per `--kernels` choice.

- `paper`: the rules' own targets (epoi, xFormers), what the paper evaluated; those
  packages are not installable today, so only `make verify`'s reference copies run them.
- `torch`: every target mapped onto code that runs with PyTorch alone (kernels/adopter_kernels/).
  The adapters of a paper kernel (adopter/rewrite/adapters.py) apply to its replacement, which
  keeps the paper kernel's API.
- `default` (what `adopter apply` uses): the `torch` kernels that the model benchmark
  (`make bench-gpu`, `make bench-models`) showed to make models faster or smaller; the
  others are reported as not rewritten, with the reason they are left out. The figures
  are in docs/benchmarks.md, not here: they change with the hardware and the versions.
"""

from __future__ import annotations

from dataclasses import dataclass

from adopter.rewrite.unsafe import Unsafe

# The package the `torch` and `default` kernels come from, and the release of its distribution
# (kernels/, adopter-kernels) whose API they call: a patched file names it on the import it adds
KERNELS_PACKAGE = "adopter_kernels"
KERNELS_REQUIREMENT = "adopter-kernels>=0.1.0"

PAPER = "paper"
TORCH = "torch"
DEFAULT = "default"
LEFT_OUT = "left out of the default kernel set: "  # how such a refusal's reason starts


@dataclass(frozen=True)
class Left:
    """A target the set does not rewrite, and why."""

    reason: str


_TORCH: dict[str, str | Left] = {
    # (the paper's Triton softmax has no PyTorch counterpart but the op itself: a rewrite to it
    # would add a dependency on Adopter for the kernel the code already runs)
    "xformers.triton.softmax.softmax": Left("PyTorch's softmax is the op the code already runs: no kernel set "
                                            "rewrites it to itself (the paper's target is xFormers' Triton softmax, "
                                            "`--kernels paper`)"),
    "epoi.ops.torchscript_ops.FusedDropoutAddLayerNorm": "adopter_kernels.DropoutAddLayerNorm",
    "epoi.ops.xformers_attn.BertSelfAttentionWithXF": "adopter_kernels.attention.BertSelfAttentionSDPA",
    "epoi.ops.xformers_attn.GPT2AttentionWithXF": "adopter_kernels.attention.GPT2AttentionSDPA",
    "epoi.ops.xformers_attn.T5Attention": "adopter_kernels.attention.T5AttentionSDPA",
}

# Why each `torch` kernel below is left out of `default`; docs/benchmarks.md has the
# measurements behind each reason and says how they were made.
_FIGURES = " (figures: docs/benchmarks.md)"
_NO_GAIN: dict[str, str] = {
    "epoi.ops.torchscript_ops.FusedDropoutAddLayerNorm":
        LEFT_OUT + "its one expression is fused only by torch.compile; in eager mode it runs "
        "the same kernels as the original" + _FIGURES,
    "epoi.ops.xformers_attn.T5Attention":
        LEFT_OUT + "SDPA with T5's learned position bias as its mask is slower than T5's own "
        "attention" + _FIGURES,
    "adopter_kernels.linear_bias_act":
        LEFT_OUT + "in eager mode the bias add leaves the matrix multiply for a kernel of its "
        "own and an extra tensor, so the model is slower and larger" + _FIGURES,
    "adopter_kernels.FusedConvBatchNorm2d":
        LEFT_OUT + "folding the norm into the convolution did not make the benchmark's "
        "ResNet faster" + _FIGURES,
    "adopter_kernels.FusedLinearBatchNorm1d":
        LEFT_OUT + "not measured (no benchmark model has it), folds like conv_batchnorm",
    "adopter_kernels.rms_normalize":
        LEFT_OUT + "mixed results: faster or slower on T5 from one run to the next" + _FIGURES,
    # tanh_gelu's one zoo model, Bloom, is not one of the benchmark's models: it is
    # measured on its own, on CPU only (docs/benchmarks.md says how)
    "torch.nn.functional.gelu":
        LEFT_OUT + "not shown to help: no gain on CPU, not measured on a GPU" + _FIGURES,
    # swiglu's kernels fuse only on CUDA (Liger-Kernel's SiLU-mul); on CPU they run the original ops
    **dict.fromkeys(("adopter_kernels.gated_act", "adopter_kernels.gated_silu", "adopter_kernels.gated_act_mul",
                     "adopter_kernels.silu_mul"),
                    LEFT_OUT + "not measured on a GPU yet (its fused kernel, Liger-Kernel's, runs on CUDA only; "
                    "elsewhere it runs the original ops)"),
    # groupnorm_silu's kernels use a library kernel only on CUDA (Liger-Kernel's group norm); on CPU the original ops
    **dict.fromkeys(("adopter_kernels.group_norm_silu", "adopter_kernels.group_norm_act"),
                    LEFT_OUT + "slower on a GPU: Liger-Kernel's group norm took longer than PyTorch's, forward "
                    "and backward" + _FIGURES),
    # rotary's kernel fuses only on CUDA (Liger-Kernel's RoPE); on CPU it runs the original ops
    "adopter_kernels.apply_rotary":
        LEFT_OUT + "not measured on a GPU yet (its fused kernel, Liger-Kernel's RoPE, runs on CUDA only; "
        "elsewhere it runs the original ops)",
}

# Kept in `default` because the benchmark showed a gain in training speed, memory and
# latency: the SDPA modules of BERT and GPT-2 (above) and `adopter_kernels.sdpa_attention`,
# the guarded manual_attention rewrite.

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


def rule_kernels(rule, kernels: str) -> list[str]:
    """The names a rule's rewrite emits in the kernel set `kernels`, one per qualified target
    (none for a detect-only rule); raises Unsafe where the set leaves one out."""
    return [kernel_for(target.callee, kernels) for target in rule.init_target + rule.forward_target
            if target.callee and not target.callee.startswith("$")]
