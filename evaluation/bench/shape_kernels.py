"""The kernels of swiglu's and groupnorm_silu's further shapes on a GPU, against the original ops.

For each kernel (`gated_act_mul` on the two halves of one projection, `silu_mul`, `gated_silu`,
`group_norm_act`) and dtype: whether the library kernel ran, its error against the original ops
in the output and in the gradients (the largest absolute difference over the largest absolute
value of the original's), and the median time of a forward and backward of each (CUDA events). One row per case, as TSV on stdout and in `--out`.

Needs a CUDA torch and Liger-Kernel (`pip install --no-deps liger-kernel==0.8.5`); without a GPU
it says so and exits 2.

Usage: python -m evaluation.bench.shape_kernels [--out FILE] [--repeats N]
"""

from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path

import torch
import torch.nn.functional as F
from torch import nn

import adopter_kernels as kernels
from adopter_kernels.library import GROUP_NORM, SILU_MUL

HEADER = ("case", "dtype", "library", "rel_err_out", "rel_err_grad", "original_ms", "kernel_ms")


def _timed(fn, repeats: int) -> float:
    """Median milliseconds of `fn()` (after warm-ups), by CUDA events."""
    for _ in range(3):
        fn()
    times = []
    for _ in range(repeats):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        end.record()
        torch.cuda.synchronize()
        times.append(start.elapsed_time(end))
    return statistics.median(times)


def _compare(original, fused, leaves: list[torch.Tensor], repeats: int) -> tuple[float, float, float, float]:
    """(relative out error, relative grad error, original ms, kernel ms) of two forward+backward functions."""
    def run(fn):
        out = fn()
        grads = torch.autograd.grad(out.float().square().sum(), leaves)
        return out, grads

    out_a, grads_a = run(original)
    out_b, grads_b = run(fused)
    def relative(a, b) -> float:
        return ((a.float() - b.float()).abs().max() / a.float().abs().max()).item()

    out_diff = relative(out_a, out_b)
    grad_diff = max(relative(a, b) for a, b in zip(grads_a, grads_b, strict=True))
    return out_diff, grad_diff, _timed(lambda: run(original), repeats), _timed(lambda: run(fused), repeats)


def cases(dtype: torch.dtype, repeats: int) -> list[tuple]:
    torch.manual_seed(0)
    rows = []
    tokens, hidden, inner = 8 * 1024, 1024, 4096
    proj = nn.Linear(hidden, 2 * inner, device="cuda", dtype=dtype)
    x = torch.randn(tokens, hidden, device="cuda", dtype=dtype, requires_grad=True)

    def halves():
        return proj(x).chunk(2, dim=-1)

    act = nn.SiLU()
    for name, original, fused, kernel in [
        ("gated_act_mul(nn.SiLU) on chunk halves",
         lambda: (lambda h: h[0] * act(h[1]))(halves()),
         lambda: (lambda h: kernels.gated_act_mul(act, h[1], h[0]))(halves()), SILU_MUL),
        ("silu_mul on chunk halves",
         lambda: (lambda h: F.silu(h[0]) * h[1])(halves()),
         lambda: (lambda h: kernels.silu_mul(h[0], h[1]))(halves()), SILU_MUL),
    ]:
        a, b = halves()
        used = kernel.supports(a, b)
        rows.append((name, str(dtype), used, *_compare(original, fused, [x, proj.weight], repeats)))

    gate = nn.Linear(hidden, inner, bias=False, device="cuda", dtype=dtype)
    up = nn.Linear(hidden, inner, bias=False, device="cuda", dtype=dtype)
    rows.append(("gated_silu", str(dtype), SILU_MUL.supports(gate(x), up(x)),
                 *_compare(lambda: F.silu(gate(x)) * up(x), lambda: kernels.gated_silu(gate, up, x),
                           [x, gate.weight, up.weight], repeats)))

    norm = nn.GroupNorm(32, 256, device="cuda", dtype=dtype)
    image = torch.randn(16, 256, 64, 64, device="cuda", dtype=dtype, requires_grad=True)
    for act_name, activation in [("nn.SiLU", nn.SiLU()), ("nn.GELU", nn.GELU())]:
        rows.append((f"group_norm_act({act_name})", str(dtype),
                     GROUP_NORM.supports(image) and kernels.group_norm_call_fits(norm, image),
                     *_compare(lambda: activation(norm(image)), lambda: kernels.group_norm_act(norm, activation, image),
                               [image, norm.weight, norm.bias], repeats)))
    return rows


def strided_halves(repeats: int) -> str:
    """Whether the library's SiLU-mul computes the right values and gradients on the strided
    halves of a (batch, seq, 2 * inner) projection passed as they are, and its median forward
    and backward time on them and on contiguous copies."""
    h = torch.randn(8, 1024, 2 * 4096, device="cuda", dtype=torch.bfloat16, requires_grad=True)

    def run(copy: bool):
        a, b = h.chunk(2, dim=-1)
        out = SILU_MUL(a.contiguous(), b.contiguous()) if copy else SILU_MUL(a, b)
        return out, torch.autograd.grad(out.float().square().sum(), [h])[0]

    def reference():
        a, b = h.chunk(2, dim=-1)
        out = F.silu(a) * b
        return out, torch.autograd.grad(out.float().square().sum(), [h])[0]

    try:
        (out, grad), (ref, ref_grad) = run(False), reference()
    except Exception as error:  # a refusal of strided input
        return f"refused: {type(error).__name__}"
    right = torch.allclose(out.float(), ref.float(), rtol=2e-2, atol=2e-2) and \
        torch.allclose(grad.float(), ref_grad.float(), rtol=5e-2, atol=5e-2 * ref_grad.float().abs().max().item())
    return (f"right values: {right}; as they are {_timed(lambda: run(False), repeats):.3g} ms, "
            f"contiguous copies {_timed(lambda: run(True), repeats):.3g} ms")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path)
    parser.add_argument("--repeats", type=int, default=20)
    args = parser.parse_args(argv)
    if not torch.cuda.is_available():
        print("no CUDA device: this check needs a GPU", file=sys.stderr)
        return 2
    rows = [row for dtype in (torch.float32, torch.bfloat16) for row in cases(dtype, args.repeats)]
    lines = ["\t".join(HEADER)] + ["\t".join(f"{v:.3g}" if isinstance(v, float) else str(v) for v in row) for row in rows]
    lines.append(f"# the library's SiLU-mul on strided halves (bfloat16, 8x1024x2x4096): {strided_halves(args.repeats)}")
    lines.append(f"# {torch.cuda.get_device_name()}, torch {torch.__version__}")
    text = "\n".join(lines) + "\n"
    print(text, end="")
    if args.out:
        args.out.write_text(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
