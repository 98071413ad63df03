"""`make verify-modern`, its diffusers half: every patch of the modern sample's diffusers 0.42.1
files (`make patch-modern` writes them to build/patched-modern-diffusers/) run against its
original, in .venv-verify5 (which installs diffusers 0.42.1 for this).

diffusers builds a model from keyword arguments rather than a config class, so the tiny
models cannot be derived as harness.py derives transformers' ones: each sample file that
gets a patch names here the model classes that run its patched code, with tiny arguments and
inputs (RUNS). A file with a patch and no entry is `not_instantiable`, saying so.

For each run, the original and the patched file are loaded as two modules of their diffusers
package (relative imports resolve in the installed package), the original model is built
from a seed, its parameters perturbed (`_perturb`) and its state_dict loaded strictly into the
patched one; both run in eval mode
(outputs compared) and in training mode (outputs and every parameter's gradient of a fixed
random projection compared), as harness.py does. A patch is `verified` when every run agrees
and every line it added ran, `not_exercised` when they agree but a line never ran, `failed`
otherwise. Writes build/verify-modern/diffusers-<set>.tsv per set and
build/verify-modern/diffusers_summary.tsv (harness.py's summary columns), and prints the summary.
"""

from __future__ import annotations

import argparse
import csv
import importlib
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from evaluation.verify import coverage, harness
from evaluation.verify.loader import _exec_file_as
from evaluation.verify.patches import SUMMARY_COLUMNS, write_rows

ROOT = Path(__file__).resolve().parents[2]
CORPUS = "diffusers-0.42.1"


@dataclass(frozen=True)
class Run:
    """A model class of the file, its tiny arguments, and its inputs (a function of a seeded generator)."""

    cls: str
    kwargs: dict
    inputs: Callable[[Any], dict]


def _motion_inputs(gen) -> dict:
    import torch

    # (batch, channels, frames, height, width); the text states come one per frame
    return {"sample": torch.randn(1, 4, 4, 16, 16, generator=gen), "timestep": torch.tensor([10]),
            "encoder_hidden_states": torch.randn(4, 4, 16, generator=gen)}


def _unet_inputs(gen, frames: int | None = None) -> dict:
    import torch

    shape = (1, 4, 16, 16) if frames is None else (1, 4, frames, 16, 16)
    return {"sample": torch.randn(*shape, generator=gen), "timestep": torch.tensor([10]),
            "encoder_hidden_states": torch.randn(1, 3, 16, generator=gen)}


def _tokens(width: int):
    """Inputs of a module that takes `hidden_states` of (batch, tokens, width)."""
    def inputs(gen) -> dict:
        import torch

        return {"hidden_states": torch.randn(2, 5, width, generator=gen)}
    return inputs


def _minimax_block_inputs(gen) -> dict:
    import torch

    # cos and sin of the leading 4 of each head's 8 dims (the block rotates a part of them)
    angles = torch.randn(5, 4, generator=gen)
    return {"hidden_states": torch.randn(2, 5, 16, generator=gen), "rotary_emb": (angles.cos(), angles.sin())}


def _prx_inputs(gen) -> dict:
    import torch

    return {"hidden_states": torch.randn(1, 4, 8, 8, generator=gen), "timestep": torch.tensor([0.5]),
            "encoder_hidden_states": torch.randn(1, 3, 8, generator=gen)}


RUNS: dict[str, list[Run]] = {
    # the patch (groupnorm_silu) is the tail of UNetMotionModel.forward: conv_norm_out, then conv_act
    "diffusers/models/unets/unet_motion_model.py": [Run(
        "UNetMotionModel",
        dict(block_out_channels=(16, 32), norm_num_groups=16, down_block_types=("CrossAttnDownBlockMotion", "DownBlockMotion"),
             up_block_types=("UpBlockMotion", "CrossAttnUpBlockMotion"), cross_attention_dim=16, num_attention_heads=2,
             in_channels=4, out_channels=4, layers_per_block=1, sample_size=16),
        _motion_inputs)],
    # the patch (swiglu) is PRXBlock's gated MLP, run by every block of the model
    "diffusers/models/transformers/transformer_prx.py": [Run(
        "PRXTransformer2DModel",
        dict(in_channels=4, patch_size=2, context_in_dim=8, hidden_size=32, mlp_ratio=2.0, num_heads=2, depth=1,
             axes_dim=[8, 8]),
        _prx_inputs)],
    # the patches (groupnorm_silu's get_activation shape) are the UNets' heads: conv_norm_out, then conv_act
    "diffusers/models/unets/unet_2d_condition.py": [Run(
        "UNet2DConditionModel",
        dict(block_out_channels=(32, 64), layers_per_block=1, sample_size=16, in_channels=4, out_channels=4,
             down_block_types=("DownBlock2D", "CrossAttnDownBlock2D"), up_block_types=("CrossAttnUpBlock2D", "UpBlock2D"),
             cross_attention_dim=16, attention_head_dim=8),
        _unet_inputs)],
    "diffusers/models/unets/unet_3d_condition.py": [Run(
        "UNet3DConditionModel",
        dict(block_out_channels=(32, 64), layers_per_block=1, sample_size=16, in_channels=4, out_channels=4,
             down_block_types=("CrossAttnDownBlock3D", "DownBlock3D"), up_block_types=("UpBlock3D", "CrossAttnUpBlock3D"),
             cross_attention_dim=16, attention_head_dim=8),
        lambda gen: _unet_inputs(gen, frames=2))],
    # swiglu's further shapes: diffusers' SwiGLU (chunked), Krea2's (F.silu), MiniMax Music 3's block (chunked F.silu)
    "diffusers/models/activations.py": [Run("SwiGLU", dict(dim_in=8, dim_out=16), _tokens(8))],
    "diffusers/models/transformers/transformer_krea2.py": [Run("Krea2SwiGLU", dict(dim=8, hidden_dim=16), _tokens(8))],
    "diffusers/models/transformers/transformer_minimax_music3.py": [Run(
        "MiniMaxMusic3TransformerBlock", dict(dim=16, heads=2, head_dim=8, ff_inner_dim=32), _minimax_block_inputs)],
}


def _load(path_in_corpus: str, file: Path, alias: str):
    """`file` executed as a module of the diffusers package that holds `path_in_corpus`."""
    parts = Path(path_in_corpus).with_suffix("").parts
    package = ".".join(parts[:-1])
    importlib.import_module(package)
    return _exec_file_as(f"{package}.{parts[-1]}_{alias}", file)


def _perturb(net, seed: int) -> None:
    """Every parameter moved off its initial value: diffusers zero-initialises layers (adaLN
    modulation, output projections) whose branches would otherwise add nothing to the output,
    so a wrong patch there could pass the output comparison."""
    import torch

    gen = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for param in net.parameters():
            if param.is_floating_point():
                param.add_(torch.randn(param.shape, generator=gen, dtype=param.dtype) * 0.1)


def _no_dropout(net) -> None:
    """Training mode without randomness: the two models would draw different masks."""
    import torch

    for module in net.modules():
        if isinstance(module, torch.nn.Dropout):
            module.p = 0.0


def verify_file(path_in_corpus: str, original: Path, patched: Path, seed: int = harness.DEFAULT_SEED) -> tuple[str, str]:
    """(status, reason) of the patched copy of one sample file against its original."""
    import torch

    runs = RUNS.get(path_in_corpus)
    if not runs:
        return "not_instantiable", "no tiny model is declared for this file (evaluation/verify/diffusers_sample.py RUNS)"
    lines = {added.line for added in coverage.added_lines(original.read_text(), patched.read_text())}
    try:
        module_a = _load(path_in_corpus, original, "original")
        module_b = _load(path_in_corpus, patched.resolve(), "patched")
    except Exception as exc:  # noqa: BLE001 - a copy that does not import is that patch's failure
        return "failed", f"import: {harness._reason(exc)}"
    hit: set[int] = set()
    for run in runs:
        torch.manual_seed(seed)
        net_a = getattr(module_a, run.cls)(**run.kwargs)
        _perturb(net_a, seed)
        torch.manual_seed(seed)
        net_b = getattr(module_b, run.cls)(**run.kwargs)
        try:
            net_b.load_state_dict(net_a.state_dict(), strict=True)
        except RuntimeError as exc:
            return "failed", f"{run.cls}: state_dict: {harness._reason(exc)}"
        for net in (net_a, net_b):
            _no_dropout(net)
        for mode in ("eval", "train"):
            inputs = run.inputs(torch.Generator().manual_seed(seed))
            for net in (net_a, net_b):
                net.train(mode == "train")
                net.zero_grad(set_to_none=True)
            step = harness._run if mode == "eval" else harness._backward
            try:
                out_a = step(net_a, inputs, seed)
                with harness._LineWatch(patched.resolve(), lines) as watch:
                    out_b = step(net_b, inputs, seed)
            except Exception as exc:  # noqa: BLE001 - reported as the run's failure
                return "failed", f"{run.cls} {mode}: {harness._reason(exc)}"
            hit |= watch.hit
            same, first, _, _ = harness.compare_outputs(out_a, out_b)
            if not same:
                return "failed", f"{run.cls} {mode}: {first}"
            if mode == "train":
                mapped = getattr(module_b, run.cls)(**run.kwargs)
                same, first, _ = harness.compare_gradients(net_a, net_b, mapped)
                if not same:
                    return "failed", f"{run.cls} gradients: {first}"
    if lines - hit:
        return "not_exercised", f"lines {sorted(lines - hit)} never ran in {', '.join(r.cls for r in runs)}"
    return "verified", ""


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpora", type=Path, default=ROOT / "modern_models")
    parser.add_argument("--patched", type=Path, default=ROOT / "build" / "patched-modern-diffusers")
    parser.add_argument("--patches", type=Path, default=ROOT / "build" / "patches-modern-diffusers")
    parser.add_argument("--out", type=Path, default=ROOT / "build" / "verify-modern")
    args = parser.parse_args(argv)
    harness._quiet()
    tables = sorted(args.patches.glob("*/patches.tsv"))
    if not tables:
        print(f"no patches under {args.patches} (run `make patch-modern` first)", file=sys.stderr)
        return 2
    summary, checked = [], {}
    for table in tables:
        name = table.parent.name
        with table.open() as handle:
            applied = [row for row in csv.DictReader(handle, delimiter="\t") if row["status"] == "applied"]
        rows = []
        for row in applied:
            key = (name, row["file"])
            if key not in checked:
                checked[key] = verify_file(row["file"], args.corpora / CORPUS / row["file"], args.patched / name / row["file"])
            status, reason = checked[key]
            rows.append({**row, "status": status, "reason": reason})
            print(f"{name:20s} {row['file']}:{row['line']} {status} {reason}", flush=True)
        write_rows(args.out / f"diffusers-{name}.tsv", ["file", "class", "line", "rule", "status", "reason"], rows)
        if rows:
            statuses = [r["status"] for r in rows]
            summary.append({"rule": name if name != "all" else "all_rules", "patches": len(rows),
                            **{c: statuses.count(c) for c in SUMMARY_COLUMNS[2:]}})
    write_rows(args.out / "diffusers_summary.tsv", SUMMARY_COLUMNS, summary)
    for row in [dict(zip(SUMMARY_COLUMNS, SUMMARY_COLUMNS)), *summary]:
        print("  ".join(f"{row[c]!s:>16}" for c in SUMMARY_COLUMNS))
    return 1 if any(r["failed"] for r in summary) else 0


if __name__ == "__main__":
    sys.exit(main())
