"""`make bench-models` / `make bench-gpu`: what the rewrites buy on the paper's nine models.

For each model (random weights) and each variant
  vanilla            the zoo file
  rule:<id>          the file patched by that rule alone, `torch` kernel set
                     (build/patched-torch/<id>/, from `make patch KERNELS=torch`)
  all                every rule at once (build/patched-torch/all/)
  compile(vanilla)   torch.compile of vanilla
  compile(all)       torch.compile of all
it measures, each variant in a fresh interpreter (so peak memory is its own):
  train   samples/s over `--steps` AdamW steps after `--warmup` steps, peak memory
  infer   median latency of a forward pass in eval mode without gradients, peak memory
and writes build/bench/models.tsv (columns `device model variant mode samples_per_s
peak_mem_mb latency_ms`, medians over `--repeats` runs; every run in models_runs.tsv) plus
build/bench/models_summary.tsv (each variant against vanilla, per model and the mean over
models), printing both.

Peak memory: on CUDA `torch.cuda.max_memory_allocated`; on CPU the interpreter's peak
resident set (ru_maxrss), which includes torch itself (~400 MB) for every variant.

Sizes: `--device cpu` uses each model's default config with 2 layers, batch 4 and 128
tokens (64x64 images for ResNet); `--device cuda` the default (base) config, batch 16
and 512 tokens (224x224 images), bf16 autocast. Run in the verification environment
(torch + transformers 4.34.0): `.venv-verify/bin/python -m evaluation.bench.models`.
"""

from __future__ import annotations

import argparse
import csv
import io
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
MODELS = ["bert", "roberta", "albert", "distilbert", "gpt2", "gpt_neo", "t5", "groupvit", "resnet"]
COLUMNS = ["device", "model", "variant", "mode", "samples_per_s", "peak_mem_mb", "latency_ms"]
_LAYER_KEYS = ("num_hidden_layers", "n_layer", "num_layers", "num_decoder_layers", "n_layers")
SIZES = {  # device -> (batch, tokens, image side for models without a configured image size, layers or None)
    "cpu": (4, 128, 64, 2),
    "cuda": (16, 512, 224, None),
}


# --------------------------------------------------------------------------- one variant (child)

def _config(tiny, model: str, module, cls, layers: int | None):
    config = tiny.config_class_for(model, module) if not isinstance(getattr(cls, "config_class", None), type) \
        else cls.config_class
    config = config()
    for sub in [config] + [v for v in vars(config).values() if hasattr(v, "to_dict") and hasattr(v, "model_type")]:
        for key in _LAYER_KEYS:
            if layers is not None and isinstance(getattr(sub, key, None), int):
                setattr(sub, key, layers)
        if layers is not None and getattr(sub, "hidden_size", 0) > 768 and hasattr(sub, "intermediate_size"):
            # small sizes: ALBERT's default is xxlarge (4096 wide); the base width instead
            sub.hidden_size, sub.num_attention_heads, sub.intermediate_size = 768, 12, 3072
        for key in ("hidden_dropout_prob", "attention_probs_dropout_prob"):
            if isinstance(getattr(sub, key, None), float):
                setattr(sub, key, 0.1)  # keep dropout: training throughput includes it
    return config


def _inputs(tiny, config, cls, device: str, gen):
    batch, tokens, side, _ = SIZES[device]
    for sub in (config, getattr(config, "text_config", None)):  # e.g. GroupViT's text encoder takes 77 tokens
        for key in ("max_position_embeddings", "n_positions"):
            if isinstance(getattr(sub, key, None), int):  # RoBERTa's positions start after its padding id
                tokens = min(tokens, getattr(sub, key) - 2)
    inputs = tiny.generic_inputs(config, cls, gen, seq=tokens, batch=batch)
    sized = [c for c in (config, getattr(config, "vision_config", None)) if isinstance(getattr(c, "image_size", None), int)]
    if "pixel_values" in inputs and not sized:  # e.g. ResNet; GroupViT's size is in its vision config
        import torch

        channels = inputs["pixel_values"].shape[-3]
        inputs["pixel_values"] = torch.randn(batch, channels, side, side, generator=gen)
    return inputs


def _loss(outputs):
    import torch

    from evaluation.verify.harness import flatten_outputs

    terms = [t.float().mean() for _, t in flatten_outputs(outputs)
             if isinstance(t, torch.Tensor) and t.requires_grad and t.is_floating_point()]
    return torch.stack(terms).sum()


def measure(model: str, variant: str, device: str, steps: int, warmup: int) -> list[dict]:
    """Build one variant and time it: a train row and an infer row."""
    import contextlib
    import resource
    import warnings

    warnings.filterwarnings("ignore")
    import torch

    from evaluation.verify import tiny
    from evaluation.verify.harness import _quiet
    from evaluation.verify.loader import load_model_module

    _quiet()
    base = variant.removeprefix("compile(").removesuffix(")")
    folder = {"vanilla": ROOT / "hf_models"}.get(base, ROOT / "build" / "patched-torch" / base.removeprefix("rule:"))
    module = load_model_module(model, folder / f"modeling_{model}.py", f"modeling_{model}_bench")
    cls = tiny.model_class(model, module)
    config = _config(tiny, model, module, cls, SIZES[device][3])
    torch.manual_seed(0)
    net = cls(config).to(device)
    gen = torch.Generator().manual_seed(0)
    inputs = {k: v.to(device) if isinstance(v, torch.Tensor) else v for k, v in _inputs(tiny, config, cls, device, gen).items()}
    batch = next(v for v in inputs.values() if isinstance(v, torch.Tensor)).shape[0]
    run = torch.compile(net) if variant.startswith("compile(") else net
    autocast = torch.autocast("cuda", dtype=torch.bfloat16) if device == "cuda" else contextlib.nullcontext()

    def sync():
        if device == "cuda":
            torch.cuda.synchronize()

    def peak_mb(reset: bool = False) -> float:
        if device == "cuda":
            value = torch.cuda.max_memory_allocated() / 2**20
            if reset:
                torch.cuda.reset_peak_memory_stats()
            return value
        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024

    # inference first (its peak is then not the training peak on CUDA; on CPU ru_maxrss only grows)
    net.eval()
    with torch.no_grad(), autocast:
        for _ in range(warmup):
            run(**inputs)
        sync()
        times = []
        for _ in range(steps):
            start = time.perf_counter()
            run(**inputs)
            sync()
            times.append(time.perf_counter() - start)
    latency = statistics.median(times)
    infer = {"mode": "infer", "samples_per_s": batch / latency, "peak_mem_mb": peak_mb(reset=True),
             "latency_ms": latency * 1000}

    net.train()
    optimizer = torch.optim.AdamW(net.parameters(), lr=1e-5)

    def step():
        optimizer.zero_grad(set_to_none=True)
        with autocast:
            loss = _loss(run(**inputs))
        loss.backward()
        optimizer.step()

    for _ in range(warmup):
        step()
    sync()
    start = time.perf_counter()
    for _ in range(steps):
        step()
    sync()
    seconds = time.perf_counter() - start
    train = {"mode": "train", "samples_per_s": batch * steps / seconds, "peak_mem_mb": peak_mb(), "latency_ms": ""}
    return [train, infer]


# --------------------------------------------------------------------------- driver

def variants(model: str) -> list[str]:
    patched = ROOT / "build" / "patched-torch"
    rules = sorted(p.name for p in patched.iterdir() if p.is_dir() and p.name != "all"
                   and (p / f"modeling_{model}.py").is_file()) if patched.is_dir() else []
    found = ["vanilla"] + [f"rule:{r}" for r in rules]
    if (patched / "all" / f"modeling_{model}.py").is_file():
        found.append("all")
    found.append("compile(vanilla)")
    if "all" in found:
        found.append("compile(all)")
    return found


def _child(args) -> int:
    rows = measure(args.child_model, args.child_variant, args.device, args.steps, args.warmup)
    print("ROWS " + json.dumps(rows))
    return 0


def _run_variant(model: str, variant: str, args) -> list[dict]:
    command = [sys.executable, "-m", "evaluation.bench.models", "--device", args.device, "--steps", str(args.steps),
               "--warmup", str(args.warmup), "--child-model", model, "--child-variant", variant]
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])))
    try:
        done = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=args.timeout)
    except subprocess.TimeoutExpired:
        print(f"  {model:10s} {variant:32s} timed out after {args.timeout} s", flush=True)
        return []
    line = next((l for l in done.stdout.splitlines() if l.startswith("ROWS ")), None)
    if line is None:
        error = (done.stderr.strip().splitlines() or ["no output"])[-1]
        print(f"  {model:10s} {variant:32s} failed: {error[:150]}", flush=True)
        return []
    rows = json.loads(line[5:])
    for row in rows:
        row.update(device=args.device, model=model, variant=variant)
    train, infer = rows
    print(f"  {model:10s} {variant:32s} train {train['samples_per_s']:8.2f} samples/s {train['peak_mem_mb']:8.0f} MB"
          f"   infer {infer['latency_ms']:8.2f} ms", flush=True)
    return rows


def medians(runs: list[dict]) -> list[dict]:
    """One row per (device, model, variant, mode): the median of each measure over the repeats."""
    groups: dict[tuple, list[dict]] = {}
    for row in runs:
        groups.setdefault(tuple(row[c] for c in COLUMNS[:4]), []).append(row)
    out = []
    for key, group in groups.items():
        row = dict(zip(COLUMNS[:4], key))
        for column in COLUMNS[4:]:
            values = [float(r[column]) for r in group if r[column] not in ("", None)]
            row[column] = statistics.median(values) if values else ""
        out.append(row)
    return out


def summarise(rows: list[dict]) -> list[dict]:
    """Each variant against vanilla: train speed-up, memory ratio, latency ratio; and means."""
    by = {(r["model"], r["variant"], r["mode"]): r for r in rows}
    out = []
    for (model, variant, mode), row in sorted(by.items()):
        base = by.get((model, "vanilla", mode))
        if mode != "train" or base is None:
            continue
        infer, base_infer = by.get((model, variant, "infer")), by.get((model, "vanilla", "infer"))
        out.append({"model": model, "variant": variant,
                    "train_speedup": float(row["samples_per_s"]) / float(base["samples_per_s"]),
                    "train_mem_ratio": float(row["peak_mem_mb"]) / float(base["peak_mem_mb"]),
                    "infer_latency_ratio": (float(infer["latency_ms"]) / float(base_infer["latency_ms"])
                                            if infer and base_infer else float("nan"))})
    for variant in sorted({r["variant"] for r in out}):
        mine = [r for r in out if r["variant"] == variant]
        out.append({"model": "mean", "variant": variant,
                    **{k: statistics.fmean(r[k] for r in mine) for k in ("train_speedup", "train_mem_ratio",
                                                                         "infer_latency_ratio")}})
    return out


def _tsv(rows: list[dict], columns: list[str]) -> str:
    text = io.StringIO()
    writer = csv.DictWriter(text, fieldnames=columns, delimiter="\t", lineterminator="\n", extrasaction="ignore")
    writer.writeheader()
    for row in rows:
        writer.writerow({k: (f"{v:.3f}" if isinstance(v, float) else v) for k, v in row.items()})
    return text.getvalue()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Training throughput, memory and latency of the nine paper models.")
    parser.add_argument("--device", choices=["cpu", "cuda"], default="cpu")
    parser.add_argument("--models", default=",".join(MODELS))
    parser.add_argument("--steps", type=int, default=None, help="timed steps (default 5 on CPU, 20 on CUDA)")
    parser.add_argument("--warmup", type=int, default=None, help="untimed steps first (default 2 on CPU, 5 on CUDA)")
    parser.add_argument("--no-compile", action="store_true", help="skip the torch.compile variants")
    parser.add_argument("--only-compile", action="store_true", help="only vanilla and the torch.compile variants")
    parser.add_argument("--variants", help="comma-separated variants to run (default: every one the model has)")
    parser.add_argument("--repeats", type=int, default=1,
                        help="runs of each variant (fresh interpreters, alternating order); the medians are kept")
    parser.add_argument("--timeout", type=float, default=900)
    parser.add_argument("--out", type=Path, default=ROOT / "build" / "bench")
    parser.add_argument("--child-model", help=argparse.SUPPRESS)
    parser.add_argument("--child-variant", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    args.steps = args.steps or (5 if args.device == "cpu" else 20)
    args.warmup = args.warmup or (2 if args.device == "cpu" else 5)
    if args.child_model:
        return _child(args)
    import torch

    if args.device == "cuda" and not torch.cuda.is_available():
        print("bench-gpu: no CUDA device here; nothing measured")
        return 0
    device_name = torch.cuda.get_device_name() if args.device == "cuda" else f"cpu ({os.cpu_count()} cores)"
    print(f"{device_name}, torch {torch.__version__}, {args.steps} timed steps after {args.warmup}", flush=True)
    stem = ("models" if args.device == "cpu" else "models_gpu") + ("_compile" if args.only_compile else "")
    args.out.mkdir(parents=True, exist_ok=True)
    from adopter.support.atomic import atomic_write_text

    runs = []
    for model in args.models.split(","):
        chosen = [v for v in variants(model) if not (args.no_compile and v.startswith("compile("))
                  and not (args.only_compile and not (v == "vanilla" or v.startswith("compile(")))
                  and (not args.variants or v in args.variants.split(","))]
        for repeat in range(args.repeats):
            # every other repeat in reverse order, so no variant always runs first (warm disks, clocks)
            for variant in chosen if repeat % 2 == 0 else chosen[::-1]:
                runs += [dict(row, run=repeat) for row in _run_variant(model, variant, args)]
                atomic_write_text(args.out / f"{stem}_runs.tsv", _tsv(runs, COLUMNS + ["run"]))  # survives a kill
    rows = medians(runs)
    atomic_write_text(args.out / f"{stem}.tsv", _tsv(rows, COLUMNS))
    summary = summarise(rows)
    columns = ["model", "variant", "train_speedup", "train_mem_ratio", "infer_latency_ratio"]
    atomic_write_text(args.out / f"{stem}_summary.tsv", _tsv(summary, columns))
    print(_tsv([r for r in summary if r["model"] == "mean"], columns))
    print(f"{device_name}; rows in {args.out / (stem + '.tsv')}, ratios in {args.out / (stem + '_summary.tsv')}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
