"""`make bench-models` / `make bench-gpu`: what the rewrites buy on the paper's nine models
and on three of today's (Llama, Qwen2, Mistral from transformers 5.23.0).

For each model (random weights) and each variant
  vanilla            the original file (the zoo's, or the modern corpus's)
  rule:<id>          the file patched by that rule alone, `torch` kernel set
                     (build/patched-torch/<id>/; the modern three: build/patched-bench-modern/torch/<id>/)
  all                every rule at once, `torch` kernel set (.../all/)
  default            every rule at once, `default` kernel set, what `adopter apply` emits
                     (build/patched-default/all/; build/patched-bench-modern/default/all/)
  compile(vanilla)   torch.compile of vanilla
  compile(default)   torch.compile of default
(`compile(all)` on request, `--variants`) it measures, each variant in a fresh interpreter
(so peak memory is its own):
  train   samples/s (and tokens/s) over `--steps` AdamW steps after `--warmup` steps, peak memory
  infer   median latency of a forward pass in eval mode without gradients, peak memory
and writes build/bench/models.tsv (columns `device model variant mode samples_per_s
tokens_per_s peak_mem_mb latency_ms same_as`, medians over `--repeats` runs; every run in
models_runs.tsv) plus build/bench/models_summary.tsv (each variant against vanilla, per
model, and the means over the paper's nine, the modern three and all models), printing both.

Where the `default` set leaves a model's file unchanged (it keeps only the rewrites the GPU
runs showed to pay, adopter/rewrite/kernel_sets.py), `default` is the vanilla code and
`compile(default)` is compile(vanilla): those rows are the vanilla rows again, marked
`same_as` (not measured twice), so the `default` means cover every model.

The modern three run in a second interpreter with transformers 5.23.0 (`--modern-python`,
default .venv-verify5/bin/python), as the modern verification does: each (patched) copy is
loaded inside the installed `transformers.models.<package>`, the class built is the
`<X>ForCausalLM` and the loss its own (labels = the input ids), so training includes the
LM head and the cross-entropy.

Peak memory: on CUDA `torch.cuda.max_memory_allocated`; on CPU the interpreter's peak
resident set (ru_maxrss), which includes torch itself (~400 MB) for every variant.

Sizes: `--device cpu` uses each paper model's default config with 2 layers, batch 4 and
128 tokens (64x64 images for ResNet); `--device cuda` the default (base) config, batch 16
and 512 tokens (224x224 images), bf16 autocast. The modern three: on CPU the verification
harness's tiny config (`tiny.tiny_config`: hidden 32, 2 layers, vocabulary 99), batch 4
and 128 tokens; on CUDA `MODERN_BASE` below (a Llama-3.2-1B-like shape with a 32k
vocabulary, random init, no weights downloaded), batch 8 and 512 tokens, bf16 autocast.
`--batch`/`--tokens` override the batch and sequence length (e.g. the smoke test's tiny run).
Run the driver in the verification environment (torch + transformers 4.34.0):
`.venv-verify/bin/python -m evaluation.bench.models`.
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
# today's models: transformers 5.23.0 sources under modern_models/, run with --modern-python
MODERN_MODELS = ["llama", "qwen2", "mistral"]
MODERN_CORPUS = "transformers-5.23.0"
# CUDA sizes of the modern three (random init): Llama-3.2-1B's shape (hidden 2048, 16 layers, 32
# query and 8 key/value heads, SwiGLU 8192) with a 32k vocabulary, 1.10B parameters (untied head); Qwen2
# and Mistral take the same numbers, so the three differ only in their code (Qwen2's q/k/v bias,
# Mistral's sliding window of 4096, which 512 tokens never reach).
MODERN_BASE = {"hidden_size": 2048, "intermediate_size": 8192, "num_hidden_layers": 16,
               "num_attention_heads": 32, "num_key_value_heads": 8, "vocab_size": 32000,
               "max_position_embeddings": 4096}
MODERN_CUDA_BATCH = 8  # x 512 tokens: AdamW state of 1B parameters and the logits fit an 80 GB GPU
COLUMNS = ["device", "model", "variant", "mode", "samples_per_s", "tokens_per_s", "peak_mem_mb", "latency_ms"]
_LAYER_KEYS = ("num_hidden_layers", "n_layer", "num_layers", "num_decoder_layers", "n_layers")
SIZES = {  # device -> (batch, tokens, image side for models without a configured image size, layers or None)
    "cpu": (4, 128, 64, 2),
    "cuda": (16, 512, 224, None),
}


# --------------------------------------------------------------------------- where each variant's file is

def _base(variant: str) -> str:
    return variant.removeprefix("compile(").removesuffix(")")


def patched_root(model: str, kernels: str, what: str = "patched") -> Path:
    """The folder of `kernels` (`torch` or `default`) patched copies, one sub-folder per set
    (`what="patches"`: the diffs and patches.tsv, written even where nothing changed)."""
    if model in MODERN_MODELS:
        return ROOT / "build" / f"{what}-bench-modern" / kernels
    return ROOT / "build" / f"{what}-{kernels}"


def _file(model: str) -> Path:
    """The file's path inside a set's folder: the modern copies keep the wheel's layout."""
    if model in MODERN_MODELS:
        return Path("transformers", "models", model, f"modeling_{model}.py")
    return Path(f"modeling_{model}.py")


def source(model: str, variant: str) -> Path:
    """The modeling file a variant runs."""
    base = _base(variant)
    if base == "vanilla":
        return (ROOT / "modern_models" / MODERN_CORPUS if model in MODERN_MODELS else ROOT / "hf_models") / _file(model)
    if base == "default":
        return patched_root(model, "default") / "all" / _file(model)
    return patched_root(model, "torch") / base.removeprefix("rule:") / _file(model)


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


def _inputs(tiny, config, cls, device: str, gen, batch: int | None = None, tokens: int | None = None):
    default_batch, default_tokens, side, _ = SIZES[device]
    batch, tokens = batch or default_batch, tokens or default_tokens
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


def _modern(tiny, model: str, module, device: str, gen, batch: int, tokens: int):
    """(class, config, inputs) of a modern model: its causal LM with its own loss; the tiny
    config of the verification harness on CPU, MODERN_BASE on CUDA."""
    import torch

    cls = next(v for k, v in vars(module).items() if k.endswith("ForCausalLM") and isinstance(v, type))
    if device == "cpu":
        config = tiny.tiny_config(model, module, cls)
    else:
        config = cls.config_class(**MODERN_BASE)
    ids = torch.randint(3, config.vocab_size, (batch, tokens), generator=gen)
    return cls, config, {"input_ids": ids, "labels": ids.clone()}


def measure(model: str, variant: str, device: str, steps: int, warmup: int,
            batch: int | None = None, tokens: int | None = None) -> list[dict]:
    """Build one variant and time it: a train row and an infer row."""
    import contextlib
    import resource
    import warnings

    warnings.filterwarnings("ignore")
    import torch

    from evaluation.verify import tiny, tiny_modern  # noqa: F401 - tiny_modern installs its table under transformers 5
    from evaluation.verify.harness import _quiet
    from evaluation.verify.loader import load_model_module

    _quiet()
    if device == "cuda" and not torch.cuda.is_available():
        raise RuntimeError(f"no CUDA in this interpreter ({sys.executable}, torch {torch.__version__})")
    module = load_model_module(model, source(model, variant), f"modeling_{model}_bench")
    gen = torch.Generator().manual_seed(0)
    if model in MODERN_MODELS:
        default_batch = MODERN_CUDA_BATCH if device == "cuda" else SIZES[device][0]
        cls, config, inputs = _modern(tiny, model, module, device, gen, batch or default_batch,
                                      tokens or SIZES[device][1])
    else:
        cls = tiny.model_class(model, module)
        config = _config(tiny, model, module, cls, SIZES[device][3])
        inputs = _inputs(tiny, config, cls, device, gen, batch, tokens)
    torch.manual_seed(0)
    net = cls(config).to(device)
    inputs = {k: v.to(device) if isinstance(v, torch.Tensor) else v for k, v in inputs.items()}
    batch = next(v for v in inputs.values() if isinstance(v, torch.Tensor)).shape[0]
    tokens_per_sample = inputs["input_ids"].shape[-1] if "input_ids" in inputs else None
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
    infer = {"mode": "infer", "samples_per_s": batch / latency,
             "tokens_per_s": batch * tokens_per_sample / latency if tokens_per_sample else "",
             "peak_mem_mb": peak_mb(reset=True), "latency_ms": latency * 1000}

    net.train()
    optimizer = torch.optim.AdamW(net.parameters(), lr=1e-5)

    def step():
        optimizer.zero_grad(set_to_none=True)
        with autocast:
            outputs = run(**inputs)
            loss = outputs.loss if getattr(outputs, "loss", None) is not None else _loss(outputs)
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
    train = {"mode": "train", "samples_per_s": batch * steps / seconds,
             "tokens_per_s": batch * tokens_per_sample * steps / seconds if tokens_per_sample else "",
             "peak_mem_mb": peak_mb(), "latency_ms": ""}
    return [train, infer]


# --------------------------------------------------------------------------- driver

def variants(model: str, extra: bool = False) -> list[str]:
    """The variants whose files exist: vanilla, each rule that patched the model, all,
    default, compile(vanilla), compile(default); with `extra` also compile(all) (run only
    when `--variants` names it)."""
    patched = patched_root(model, "torch")
    rules = sorted(p.name for p in patched.iterdir() if p.is_dir() and p.name != "all"
                   and (p / _file(model)).is_file()) if patched.is_dir() else []
    found = ["vanilla"] + [f"rule:{r}" for r in rules]
    if source(model, "all").is_file():
        found.append("all")
    has_default = source(model, "default").is_file()
    if has_default:
        found.append("default")
    found.append("compile(vanilla)")
    if has_default:
        found.append("compile(default)")
    if extra and "all" in found:
        found.append("compile(all)")
    return found


# where the `default` set leaves a model unchanged, its rows are these variants' rows again
SAME_AS = {"default": "vanilla", "compile(default)": "compile(vanilla)"}


def unpatched_by_default(model: str) -> bool:
    """Whether the `default` set left the model's file as it is (no copy was written):
    then `default` is the vanilla code. True only once the default set was applied
    (its patches.tsv exists)."""
    return (patched_root(model, "default", "patches") / "all" / "patches.tsv").is_file() \
        and not source(model, "default").is_file()


def alias_rows(rows: list[dict], model: str, wanted: list[str] | None = None) -> list[dict]:
    """The `default` and `compile(default)` rows of a model the `default` set leaves unchanged:
    copies of its vanilla and compile(vanilla) rows, `same_as` naming the row copied."""
    out = []
    for variant, original in SAME_AS.items():
        if wanted is not None and variant not in wanted:
            continue
        out += [dict(row, variant=variant, same_as=original) for row in rows
                if row["model"] == model and row["variant"] == original]
    return out


def _child(args) -> int:
    rows = measure(args.child_model, args.child_variant, args.device, args.steps, args.warmup,
                   args.batch, args.tokens)
    print("ROWS " + json.dumps(rows))
    return 0


def _python(model: str, args) -> str:
    """The interpreter a model's variants run in: this one for the paper's nine
    (transformers 4.34.0), `--modern-python` (transformers 5.23.0) for the modern three."""
    return str(args.modern_python) if model in MODERN_MODELS else sys.executable


def _run_variant(model: str, variant: str, args) -> list[dict]:
    command = [_python(model, args), "-m", "evaluation.bench.models", "--device", args.device, "--steps", str(args.steps),
               "--warmup", str(args.warmup), "--child-model", model, "--child-variant", variant]
    for option in ("batch", "tokens"):
        if getattr(args, option):
            command += [f"--{option}", str(getattr(args, option))]
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
    tokens = f" {train['tokens_per_s']:9.0f} tokens/s" if train.get("tokens_per_s") not in ("", None) else " " * 18
    print(f"  {model:10s} {variant:32s} train {train['samples_per_s']:8.2f} samples/s{tokens} {train['peak_mem_mb']:8.0f} MB"
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
            values = [float(r[column]) for r in group if r.get(column) not in ("", None)]
            row[column] = statistics.median(values) if values else ""
        out.append(row)
    return out


MEANS = {"mean:paper9": MODELS, "mean:modern3": MODERN_MODELS, "mean": None}


def summarise(rows: list[dict]) -> list[dict]:
    """Each variant against vanilla: train speed-up, memory ratio, latency ratio; and the means
    over the paper's nine (`mean:paper9`), the modern three (`mean:modern3`) and all models
    (`mean`), each over the models that have the variant."""
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
                                            if infer and base_infer else float("nan")),
                    "same_as": row.get("same_as", "")})
    per_model = list(out)
    for name, members in MEANS.items():
        for variant in sorted({r["variant"] for r in per_model}):
            mine = [r for r in per_model if r["variant"] == variant and (members is None or r["model"] in members)]
            if not mine:
                continue
            out.append({"model": name, "variant": variant, "n_models": len(mine), "same_as": "",
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


def _versions(python: str) -> str:
    """torch and transformers of an interpreter, as one string (for the header line)."""
    code = "import torch, transformers; print(f'torch {torch.__version__}, transformers {transformers.__version__}')"
    try:
        done = subprocess.run([python, "-c", code], capture_output=True, text=True, timeout=120)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"not runnable ({exc})"
    return done.stdout.strip() or f"not runnable ({(done.stderr.strip().splitlines() or ['?'])[-1]})"


def _wanted(model: str, variant: str, args) -> bool:
    return (not (args.no_compile and variant.startswith("compile("))
            and not (args.only_compile and not (variant == "vanilla" or variant.startswith("compile(")))
            and (not args.variants or variant in args.variants.split(",")))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Training throughput, memory and latency of the nine paper models "
                                                 "and three modern ones.")
    parser.add_argument("--device", choices=["cpu", "cuda"], default="cpu")
    parser.add_argument("--models", default=",".join(MODELS + MODERN_MODELS))
    parser.add_argument("--modern-python", type=Path, default=ROOT / ".venv-verify5" / "bin" / "python",
                        help="interpreter with transformers 5.23.0 for " + ", ".join(MODERN_MODELS))
    parser.add_argument("--batch", type=int, help="samples per step (default: the device's size, see the docstring)")
    parser.add_argument("--tokens", type=int, help="tokens per sample (default: the device's size)")
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
    models = args.models.split(",")
    print(f"{device_name}, {args.steps} timed steps after {args.warmup}, {args.repeats} run(s) of each variant",
          flush=True)
    print(f"  paper models: {sys.executable}: {_versions(sys.executable)}", flush=True)
    if any(m in MODERN_MODELS for m in models):
        if not args.modern_python.exists():
            print(f"  modern models: {args.modern_python} missing (make verify5-setup); "
                  f"{', '.join(m for m in models if m in MODERN_MODELS)} not measured", flush=True)
            models = [m for m in models if m not in MODERN_MODELS]
        else:
            print(f"  modern models: {args.modern_python}: {_versions(str(args.modern_python))}", flush=True)
    stem = ("models" if args.device == "cpu" else "models_gpu") + ("_compile" if args.only_compile else "")
    args.out.mkdir(parents=True, exist_ok=True)
    from adopter.support.atomic import atomic_write_text

    runs = []
    for model in models:
        if not source(model, "vanilla").is_file():
            print(f"  {model:10s} no source at {source(model, 'vanilla')} (make zoo / make zoo-modern)", flush=True)
            continue
        chosen = [v for v in variants(model, extra=bool(args.variants)) if _wanted(model, v, args)]
        if unpatched_by_default(model) and any(_wanted(model, v, args) for v in SAME_AS):
            print(f"  {model:10s} the default set leaves it unchanged: default = vanilla, "
                  f"compile(default) = compile(vanilla)", flush=True)
        for repeat in range(args.repeats):
            # every other repeat in reverse order, so no variant always runs first (warm disks, clocks)
            for variant in chosen if repeat % 2 == 0 else chosen[::-1]:
                runs += [dict(row, run=repeat) for row in _run_variant(model, variant, args)]
                atomic_write_text(args.out / f"{stem}_runs.tsv", _tsv(runs, COLUMNS + ["run"]))  # survives a kill
    rows = medians(runs)
    for model in models:
        if unpatched_by_default(model):
            rows += alias_rows(rows, model, [v for v in SAME_AS if _wanted(model, v, args)])
    atomic_write_text(args.out / f"{stem}.tsv", _tsv(rows, COLUMNS + ["same_as"]))
    summary = summarise(rows)
    columns = ["model", "variant", "train_speedup", "train_mem_ratio", "infer_latency_ratio", "n_models", "same_as"]
    atomic_write_text(args.out / f"{stem}_summary.tsv", _tsv(summary, columns))
    print(_tsv([r for r in summary if r["model"].startswith("mean")], columns))
    print(f"{device_name}; rows in {args.out / (stem + '.tsv')}, ratios in {args.out / (stem + '_summary.tsv')}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
