"""`make verify-dev`: the patches of the development corpus (issue 50: litgpt 0.5.13, torchtitan
0.3.0, torchvision 0.29.1, x-transformers 2.31.10; dev_models/, source only) run against the
originals, in .venv-verify-dev (torch 2.13.0 CPU; requirements-verify-dev.lock).

`python -m evaluation.patch_zoo --kernels torch --dev CORPUS` writes the patched copies
(build/patched-dev/CORPUS/all/<path>) and the applied patches (build/patches-dev/CORPUS/all/patches.tsv).
These codebases build models from constructor arguments, not from a config class that could be
shrunk by rule as harness.py does for transformers, so the tiny models are named here (RUNS), each
with the patched files it is built to run. For every (model, patched file) pair:

  - the original: the codebase's packages imported from dev_models/CORPUS (source_tree.py; the
    parts of each package outside the corpus, which holds the model code only, from the pinned
    wheel of the same release), the model built from a seed, every parameter moved off its
    initial value and BatchNorm statistics made non-trivial (a zero-initialised branch or a
    unit variance would hide a wrong patch);
  - the patched copy: the same packages with that one file replaced by its patched copy (so a
    failure names its file), the model built again and the original's state_dict loaded with
    strict=True;
  - both run the same inputs in eval mode under no_grad (outputs compared), then in training
    mode with dropout and stochastic depth off (outputs and every parameter gradient of a fixed
    random projection compared), with harness.py's comparison and tolerances; a value mismatch
    in float32 is run again in float64, as harness.compare does, and says so.

Status of a row (one per codebase, model, patched file):
  verified          outputs (and gradients, unless the reason says train mode is not compared)
                    allclose, and every line the file's patches added ran
  failed            outputs or gradients differ, the state_dict does not load strictly, or the
                    patched copy does not import, build or run; the reason names the tensor
  not_exercised     outputs equal, but some added line never ran in this model (listed)
  not_instantiable  the original itself cannot be built or run here (the reason says why)
  unpatched         a model none of whose files is patched (resnet18, ...): it is run against the
                    codebase with every patched file in place, and would be `failed` if it differed
A patched file that no model here is built for gets one row with model `-`: not_exercised or
not_instantiable, with the reason (NOT_BUILT). Writes build/verify-dev/summary.tsv (those rows)
and build/verify-dev/files.tsv (per patched file: its patches, the models whose runs verified each,
and the file's status: verified only when every patch of the file ran in a verified model and no
model failed), and prints both.
"""

from __future__ import annotations

import argparse
import csv
import importlib
import math
import sys
import time
import types
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from evaluation.verify import coverage, harness
from evaluation.verify.source_tree import SourceTree

ROOT = Path(__file__).resolve().parents[2]
SUMMARY_COLUMNS = ["codebase", "model", "file", "patches", "exercised", "status", "max_abs_diff", "reason"]
FILE_COLUMNS = ["codebase", "file", "patches", "verified_by", "status", "reason"]


def _no_legacy_checkpoints(*args, **kwargs):
    raise NotImplementedError("litgpt.scripts.convert_hf_checkpoint is not loaded by the verifier "
                              "(it imports lightning); qkv_reassemble converts legacy checkpoint keys only")


# How each codebase's packages are imported (source_tree.SourceTree arguments).
# litgpt: its __init__ imports the whole CLI (lightning, tokenizers, ...); model.py needs config.py
# (from the wheel) and, for legacy checkpoint keys only, convert_hf_checkpoint's qkv_reassemble.
# torchvision: its __init__ loads the compiled _C ops first, which fail to load beside the CPU torch (PyPI's
# torchvision wheels are CUDA builds).
CODEBASES: dict[str, dict] = {
    "litgpt-0.5.13": dict(packages=["litgpt"], bare=("litgpt",),
                          stubs={"litgpt.scripts.convert_hf_checkpoint": {"qkv_reassemble": _no_legacy_checkpoints}}),
    "torchtitan-0.3.0": dict(packages=["torchtitan"]),  # (+ PRELOAD)
    "torchvision-0.29.1": dict(packages=["torchvision"], bare=("torchvision",)),
    "x-transformers-2.31.10": dict(packages=["x_transformers"]),
}

# Installed modules imported once, before any tree, and shared by all: torchtitan's scatter-add
# defines a torch.library custom op, which a second import would define again and break.
PRELOAD: dict[str, tuple[str, ...]] = {"torchtitan-0.3.0": ("torchtitan.ops.scatter_add",)}

Import = Callable[[str], types.ModuleType]  # a module of the active tree, by name


@dataclass(frozen=True)
class Run:
    """A tiny model of one codebase: `build(imp)` makes it from the active tree's modules,
    `inputs(gen)` its forward's keyword arguments; `files` are the patched files (paths in the
    corpus) it is built to run, empty for a model none of whose files is patched."""

    codebase: str
    model: str
    build: Callable[[Import], Any]
    inputs: Callable[[Any], dict]
    files: tuple[str, ...] = ()
    eval_only: str = ""  # why training mode is not compared, when it is not


class _Function:
    """A module-level function run as a model: its tensor arguments are the parameters, so that
    training mode compares the gradients with respect to them."""

    def __new__(cls, fn: Callable, **tensors):
        import torch

        class Function(torch.nn.Module):
            def __init__(self):
                super().__init__()
                for name, value in tensors.items():
                    self.register_parameter(name, torch.nn.Parameter(value.clone()))

            def forward(self):
                return fn(**{name: getattr(self, name) for name in tensors})

        return Function()


class _Decoder:
    """A torchtitan decoder called as its trainer calls it: positions, then the attention masks
    built from them (the flex-attention backend needs them)."""

    def __new__(cls, net):
        import torch

        class Decoder(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.net = net

            def forward(self, tokens, positions):
                return self.net(tokens, positions, self.net.get_attention_masks(positions))

        return Decoder()


# --------------------------------------------------------------------------- the tiny models


def _tokens(vocab: int, length: int = 12, name: str = "x"):
    def inputs(gen) -> dict:
        import torch

        return {name: torch.randint(0, vocab, (2, length), generator=gen)}
    return inputs


def _images(*shape: int, name: str = "x"):
    def inputs(gen) -> dict:
        import torch

        return {name: torch.randn(2, *shape, generator=gen)}
    return inputs


def _xt_wrapper(**attn):
    def build(imp: Import):
        xt = imp("x_transformers")
        return xt.TransformerWrapper(num_tokens=32, max_seq_len=16, mixture_of_softmax=True,
                                     attn_layers=xt.Decoder(dim=16, depth=2, heads=2, attn_dim_head=8, **attn))
    return build


def _xt_wrapper_inputs(gen) -> dict:
    return {**_tokens(32)(gen), "return_logit_entropies": True}


def _litgpt(**extra):
    def build(imp: Import):
        config = imp("litgpt.config").Config(
            n_layer=2, n_head=4, n_embd=32, block_size=16, vocab_size=64, padded_vocab_size=64, bias=False,
            norm_class_name="RMSNorm", mlp_class_name="LLaMAMLP", intermediate_size=48, rotary_percentage=1.0,
            parallel_residual=False, attention_logit_softcapping=20.0, **extra)  # softcapping: the manual attention path
        return imp("litgpt.model").GPT(config)
    return build


_MLA = dict(latent_attention=dict(q_lora_rank=16, kv_lora_rank=16, qk_rope_head_dim=4, qk_nope_head_dim=4, v_head_dim=8))


def _titan_norm(name: str):
    def build(imp: Import):
        cls = getattr(imp("torchtitan.models.qwen3_5.model"), name)
        return cls(cls.Config(dim=16))
    return build


def _titan_gated_inputs(gen) -> dict:
    import torch

    return {"x": torch.randn(2, 12, 16, generator=gen), "gate": torch.randn(2, 12, 16, generator=gen)}


def _titan_decoder(package: str, layers: int):
    def build(imp: Import):
        spec = imp(f"torchtitan.models.{package}").model_registry("debugmodel", attn_backend="flex", **(
            {"moe_comm_backend": "standard"} if package == "deepseek_v3" else {}))
        config = spec.model
        config.layers = config.layers[:layers]  # the debug model's first layers (deepseek_v3: one dense, one MoE)
        net = config.build()
        net.init_states()
        return _Decoder(net)
    return build


def _titan_decoder_inputs(gen) -> dict:
    import torch

    return {"tokens": torch.randint(0, 2048, (2, 16), generator=gen), "positions": torch.arange(16).repeat(2, 1)}


_FLEX = "torchtitan's language models attend with FlexAttention, which has no backward on CPU (torch 2.13)"


def _tv(builder: str, module: str = "torchvision.models", **kwargs):
    def build(imp: Import):
        return getattr(imp(module), builder)(**kwargs)
    return build


def _tv_convnext(imp: Import):
    convnext = imp("torchvision.models.convnext")
    return convnext.ConvNeXt([convnext.CNBlockConfig(16, 32, 1), convnext.CNBlockConfig(32, None, 1)], num_classes=10)


XT, LIT, TITAN, TV = "x-transformers-2.31.10", "litgpt-0.5.13", "torchtitan-0.3.0", "torchvision-0.29.1"
XT_MAIN = "x_transformers/x_transformers.py"
RUNS: list[Run] = [
    # SoLU feed-forwards and a mixture-of-softmax head, with the logit entropies asked for: options whose
    # code the patched x_transformers.py keeps as it was
    Run(XT, "TransformerWrapper(Decoder; SoLU, mixture of softmax, logit entropies)",
        _xt_wrapper(ff_solu=True), _xt_wrapper_inputs, (XT_MAIN,)),
    # GLU feed-forwards with SiLU (the gated MLP swiglu rewrites) and with GELU
    Run(XT, "TransformerWrapper(Decoder; GLU feed-forwards, SiLU)", _xt_wrapper(ff_glu=True, ff_swish=True),
        _xt_wrapper_inputs, (XT_MAIN,)),
    Run(XT, "TransformerWrapper(Decoder; GLU feed-forwards, GELU)", _xt_wrapper(ff_glu=True), _xt_wrapper_inputs,
        (XT_MAIN,)),
    # CoPE's soft one-hot positions
    Run(XT, "TransformerWrapper(Decoder; CoPE soft one-hot positions)",
        _xt_wrapper(attn_use_cope=True, attn_cope_soft_onehot_pos=True, attn_cope_max_pos=8), _xt_wrapper_inputs,
        (XT_MAIN,)),
    Run(LIT, "GPT(LLaMAMLP, attention logit softcapping)", _litgpt(), _tokens(64, name="idx"), ("litgpt/model.py",)),
    Run(LIT, "GPT(multi-head latent attention, LLaMAMLP, softcapping)", _litgpt(**_MLA), _tokens(64, name="idx"),
        ("litgpt/model.py",)),
    Run(TITAN, "llama3 debugmodel, 2 layers", _titan_decoder("llama3", 2), _titan_decoder_inputs, eval_only=_FLEX),
    Run(TITAN, "qwen3_5 OffsetRMSNorm", _titan_norm("OffsetRMSNorm"), _images(12, 16),
        ("torchtitan/models/qwen3_5/model.py",)),
    Run(TITAN, "qwen3_5 RMSNormGated", _titan_norm("RMSNormGated"), _titan_gated_inputs,
        ("torchtitan/models/qwen3_5/model.py",)),
    Run(TV, "resnet18", _tv("resnet18", num_classes=10), _images(3, 32, 32)),
    Run(TV, "mobilenet_v3_small", _tv("mobilenet_v3_small", num_classes=10), _images(3, 32, 32)),
    Run(TV, "convnext (2 stages of 1 block, 16/32 channels)", _tv_convnext, _images(3, 32, 32)),
    Run(TV, "googlenet", _tv("googlenet", "torchvision.models.googlenet", num_classes=10, aux_logits=False, init_weights=True), _images(3, 64, 64),
        ("torchvision/models/googlenet.py",)),
    Run(TV, "inception_v3", _tv("inception_v3", "torchvision.models.inception", num_classes=10, aux_logits=False, init_weights=True),
        _images(3, 160, 160), ("torchvision/models/inception.py",)),
]

# Patched files no model above is built for, and why (none today).
NOT_BUILT: dict[tuple[str, str], tuple[str, str]] = {}


# --------------------------------------------------------------------------- comparison


def _prepare(net, inputs: dict, seed: int) -> None:
    """Every floating parameter moved off its initial value (diffusers_sample's reason: a
    zero-initialised branch hides a wrong patch; torch.empty ones get defined values), then
    BatchNorm running statistics set to the batch statistics of a training-mode pass over the
    inputs, so that eval mode normalises as training did (mean 0 and variance 1 would let a wrong
    folding pass; statistics unrelated to the data, or the unbiased variance of a batch of two,
    make the activations of a deep network grow until float32 rounding decides the comparison)."""
    import torch

    gen = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for param in net.parameters():
            if param.is_floating_point():
                if not torch.isfinite(param).all():
                    param.zero_()
                param.add_(torch.randn(param.shape, generator=gen, dtype=param.dtype) * 0.1)
    norms = [m for m in net.modules() if isinstance(m, torch.nn.modules.batchnorm._BatchNorm)
             and m.running_mean is not None]
    if not norms:
        return
    seen = {}

    def record(module, args):
        x = args[0].detach()
        dims = [d for d in range(x.dim()) if d != 1]
        seen[module] = (x.mean(dims), x.var(dims, unbiased=False))  # what training mode normalises with

    hooks = [m.register_forward_pre_hook(record) for m in norms]
    try:
        _no_randomness(net)
        net.train()
        harness._run(net, inputs, seed)
    finally:
        for hook in hooks:
            hook.remove()
    with torch.no_grad():
        for m, (mean, var) in seen.items():
            m.running_mean.copy_(mean)
            m.running_var.copy_(var)


def _no_randomness(net) -> None:
    """Training mode without random masks: dropout and stochastic depth off."""
    import torch

    for module in net.modules():
        if isinstance(module, torch.nn.Dropout) or type(module).__name__ == "StochasticDepth":
            module.p = 0.0


def _in(tree: SourceTree, fn: Callable, *args):
    with tree:
        return fn(*args)


@dataclass
class Outcome:
    status: str  # verified | failed | not_instantiable (before the line check)
    reason: str
    max_abs_diff: float | None = None
    hit: frozenset = frozenset()
    mismatch: bool = False


def compare_run(run: Run, original: SourceTree, patched: SourceTree, watch: Path | None, lines: set[int],
                seed: int = harness.DEFAULT_SEED) -> Outcome:
    """`run` built in both trees and compared (see the module docstring); in float64 again when
    float32 values differ, as harness.compare does."""
    import torch

    first = _compare_once(run, original, patched, watch, lines, seed)
    if not first.mismatch:
        return first
    torch.set_default_dtype(torch.float64)
    try:
        again = _compare_once(run, original, patched, watch, lines, seed)
    finally:
        torch.set_default_dtype(torch.float32)
    if again.status != "verified":
        return first
    again.reason = f"{again.reason}; in float64 (float32 differed: {first.reason[:160]})"
    return again


def _compare_once(run: Run, original: SourceTree, patched: SourceTree, watch: Path | None, lines: set[int],
                  seed: int) -> Outcome:
    import torch

    hit: set[int] = set()

    def watched(fn, *args):
        if watch is None:
            return _in(patched, fn, *args)
        with harness._LineWatch(watch, lines) as w:
            try:
                return _in(patched, fn, *args)
            finally:
                hit.update(w.hit)

    def seeded_build(imp):
        torch.manual_seed(seed)
        return run.build(imp)

    inputs = run.inputs(torch.Generator().manual_seed(seed))
    try:
        net_a = _in(original, seeded_build, original.module)
        _in(original, _prepare, net_a, inputs, seed)
        net_a.eval()
        out_a = _in(original, harness._run, net_a, inputs, seed)
    except Exception as exc:  # noqa: BLE001 - the original does not run here
        return Outcome("not_instantiable", f"original: {harness._reason(exc)}")
    try:
        net_b = watched(seeded_build, patched.module)
    except Exception as exc:  # noqa: BLE001
        return Outcome("failed", f"patched copy does not build: {harness._reason(exc)}", math.inf, frozenset(hit))
    try:
        net_b.load_state_dict(net_a.state_dict(), strict=True)
    except Exception as exc:  # noqa: BLE001
        return Outcome("failed", f"state_dict does not load strictly: {harness._reason(exc)}", math.inf, frozenset(hit))
    net_b.eval()
    try:
        out_b = watched(harness._run, net_b, inputs, seed)
    except Exception as exc:  # noqa: BLE001
        return Outcome("failed", f"eval: patched forward raises: {harness._reason(exc)}", math.inf, frozenset(hit))
    same, first, worst, count = harness.compare_outputs(out_a, out_b)
    if not same:
        return Outcome("failed", f"eval: {first}", worst, frozenset(hit), mismatch=True)
    if count == 0:
        return Outcome("not_instantiable", "forward returned no tensor to compare")
    note = f"eval: {count} tensors allclose (rtol={harness.RTOL}, atol={harness.ATOL})"
    if run.eval_only:
        return Outcome("verified", f"{note}; train mode not compared: {run.eval_only}", worst, frozenset(hit))

    for net in (net_a, net_b):
        _no_randomness(net)
        net.train()
        net.zero_grad(set_to_none=True)
    try:
        train_a = _in(original, harness._backward, net_a, inputs, seed)
    except Exception as exc:  # noqa: BLE001
        return Outcome("verified", f"{note}; train mode not compared (original: {harness._reason(exc)[:160]})",
                       worst, frozenset(hit))
    if train_a is None:
        return Outcome("verified", f"{note}; train mode not compared (no differentiable output)", worst, frozenset(hit))
    try:
        train_b = watched(harness._backward, net_b, inputs, seed)
    except Exception as exc:  # noqa: BLE001
        return Outcome("failed", f"train: patched forward raises: {harness._reason(exc)}", math.inf, frozenset(hit))
    same, first, worst_t, _ = harness.compare_outputs(train_a, train_b)
    if not same:
        return Outcome("failed", f"train outputs: {first}", worst_t, frozenset(hit), mismatch=True)
    try:
        mapped = _in(patched, seeded_build, patched.module)
        same, first, grads = harness.compare_gradients(net_a, net_b, mapped)
    except Exception as exc:  # noqa: BLE001
        return Outcome("failed", f"train: gradients cannot be mapped: {harness._reason(exc)}", math.inf, frozenset(hit))
    if not same:
        return Outcome("failed", f"train gradients: {first}", max(worst, worst_t), frozenset(hit), mismatch=True)
    return Outcome("verified", f"{note}; train: outputs and {grads} parameter gradients allclose "
                               f"(rtol={harness.GRAD_RTOL}, atol={harness.GRAD_ATOL})",
                   max(worst, worst_t), frozenset(hit))


# --------------------------------------------------------------------------- the tables


@dataclass
class PatchedFile:
    codebase: str
    path: str  # in the corpus
    original: Path
    patched: Path
    patches: list[dict]  # applied rows of patches.tsv
    lines: dict[int, list[int]]  # patch index -> lines it added

    def label(self, i: int) -> str:
        p = self.patches[i]
        return f"{p['rule']}@{p['line']}"


def load_patched(codebase: str, corpora: Path, patched_root: Path, patches_root: Path) -> list[PatchedFile]:
    table = patches_root / codebase / "all" / "patches.tsv"
    rows: dict[str, list[dict]] = {}
    with table.open() as handle:
        for row in csv.DictReader(handle, delimiter="\t"):
            if row["status"] == "applied":
                rows.setdefault(row["file"], []).append(row)
    files = []
    for path, patches in sorted(rows.items()):
        original, patched = corpora / codebase / path, patched_root / codebase / "all" / path
        added = coverage.added_lines(original.read_text(), patched.read_text())
        lines = coverage.assign(added, [(p["class"], int(p["line"])) for p in patches])
        files.append(PatchedFile(codebase, path, original.resolve(), patched.resolve(), patches, lines))
    return files


def _module_name(path: str) -> str:
    parts = Path(path).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _tree(codebase: str, corpora: Path, overrides: dict[str, Path] | None = None) -> SourceTree:
    return SourceTree(corpora / codebase, overrides=overrides, **CODEBASES[codebase])


def _diff(value: float | None) -> str:
    return "" if value is None else f"{value:.3g}"


def verify(corpora: Path, patched_root: Path, patches_root: Path, codebases: list[str], seed: int,
           models: str | None = None) -> tuple[list[dict], list[dict]]:
    """(summary rows, file rows) for `codebases`."""
    summary, file_rows = [], []
    for codebase in codebases:
        files = load_patched(codebase, corpora, patched_root, patches_root)
        by_path = {f.path: f for f in files}
        runs = [r for r in RUNS if r.codebase == codebase and (not models or models in r.model)]
        unknown = [p for r in runs for p in r.files if p not in by_path]
        if unknown:  # a run built for a file that is no longer patched: the table above needs updating
            raise SystemExit(f"{codebase}: RUNS name files without an applied patch: {unknown}")
        for name in PRELOAD.get(codebase, ()):
            importlib.import_module(name)
        original = _tree(codebase, corpora)
        everything = _tree(codebase, corpora, {_module_name(f.path): f.patched for f in files})
        trees = {f.path: _tree(codebase, corpora, {_module_name(f.path): f.patched}) for f in files}
        ran: dict[str, dict[int, list[str]]] = {f.path: {} for f in files}  # file -> patch -> models verifying it
        failed: dict[str, list[str]] = {f.path: [] for f in files}
        other: dict[str, list[str]] = {f.path: [] for f in files}  # rows that ran none of a patch's lines, and why
        for run in runs:
            targets = [by_path[p] for p in run.files] or [None]
            for target in targets:
                start = time.perf_counter()
                if target is None:  # a model none of whose files is patched: against the whole patched codebase
                    outcome = compare_run(run, original, everything, None, set(), seed)
                    status = "unpatched" if outcome.status == "verified" else outcome.status
                    row = dict(file="-", patches="", exercised="", status=status,
                               reason=f"none of its files is patched; compared with all {len(files)} patched files "
                                      f"of {codebase} in place: {outcome.reason}")
                else:
                    lines = set().union(*target.lines.values())
                    outcome = compare_run(run, original, trees[target.path], target.patched, lines, seed)
                    done = [i for i, added in target.lines.items() if added and set(added) <= outcome.hit]
                    missing = sorted(lines - outcome.hit)
                    status, reason = outcome.status, outcome.reason
                    if status == "verified" and missing:
                        status = "not_exercised"
                        reason = (f"lines {missing} of the patched copy never ran "
                                  f"(patches {', '.join(target.label(i) for i in sorted(target.lines) if i not in done)}); "
                                  f"{reason}")
                    if outcome.status == "verified":
                        for i in done:
                            ran[target.path].setdefault(i, []).append(run.model)
                    if status == "failed":
                        failed[target.path].append(f"{run.model}: {reason}")
                    elif status == "not_instantiable":
                        other[target.path].append(f"{run.model} is not instantiable ({reason[:200]})")
                    row = dict(file=target.path, patches=", ".join(target.label(i) for i in range(len(target.patches))),
                               exercised=f"{len(done)}/{len(target.patches)}", status=status, reason=reason)
                row = dict(codebase=codebase, model=run.model, max_abs_diff=_diff(outcome.max_abs_diff), **row)
                summary.append(row)
                print(f"  {codebase:22s} {run.model[:58]:58s} {row['file'][-40:]:40s} {row['status']:16s} "
                      f"{row['max_abs_diff']:>9s} {time.perf_counter() - start:5.1f}s  {row['reason'][:150]}", flush=True)
        for f in files:
            built_for = [r.model for r in runs if f.path in r.files]
            labels = ", ".join(f.label(i) for i in range(len(f.patches)))
            if not built_for:
                status, reason = NOT_BUILT.get((codebase, f.path),
                                               ("not_exercised", "no tiny model here is built to run it (RUNS)"))
                summary.append(dict(codebase=codebase, model="-", file=f.path, patches=labels,
                                    exercised=f"0/{len(f.patches)}", status=status, max_abs_diff="", reason=reason))
                print(f"  {codebase:22s} {'-':58s} {f.path[-40:]:40s} {status:16s} {'':>9s}        {reason[:150]}")
            verified_by = "; ".join(f"{f.label(i)}: {', '.join(ran[f.path][i])}" for i in sorted(ran[f.path]))
            unrun = [f.label(i) for i in range(len(f.patches)) if i not in ran[f.path]]
            if failed[f.path]:
                status, reason = "failed", " | ".join(failed[f.path])
            elif not unrun:
                status, reason = "verified", "every patch ran in a model whose outputs and gradients agree"
            elif built_for:
                status, reason = "not_exercised", "; ".join([f"patches {', '.join(unrun)} never ran in {', '.join(built_for)}",
                                                              *other[f.path]])
            else:
                status, reason = NOT_BUILT.get((codebase, f.path), ("not_exercised", "no tiny model here runs it"))
            file_rows.append(dict(codebase=codebase, file=f.path, patches=labels, verified_by=verified_by,
                                  status=status, reason=reason))
    return summary, file_rows


def _write(path: Path, columns: list[str], rows: list[dict]) -> None:
    from evaluation.verify.patches import write_rows

    write_rows(path, columns, rows)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpora", type=Path, default=ROOT / "dev_models")
    parser.add_argument("--patched", type=Path, default=ROOT / "build" / "patched-dev")
    parser.add_argument("--patches", type=Path, default=ROOT / "build" / "patches-dev")
    parser.add_argument("--out", type=Path, default=ROOT / "build" / "verify-dev")
    parser.add_argument("--codebases", help="comma-separated (default: the four)")
    parser.add_argument("--models", help="only the runs whose model label contains this")
    parser.add_argument("--seed", type=int, default=harness.DEFAULT_SEED)
    args = parser.parse_args(argv)
    harness._quiet()
    codebases = args.codebases.split(",") if args.codebases else list(CODEBASES)
    missing = [c for c in codebases if not (args.patches / c / "all" / "patches.tsv").is_file()]
    if missing:
        print(f"no patches for {missing} under {args.patches}: run `make verify-dev` (or "
              f"`python -m evaluation.patch_zoo --kernels torch --dev CORPUS`)", file=sys.stderr)
        return 2
    start = time.perf_counter()
    summary, files = verify(args.corpora, args.patched, args.patches, codebases, args.seed, args.models)
    _write(args.out / "summary.tsv", SUMMARY_COLUMNS, summary)
    _write(args.out / "files.tsv", FILE_COLUMNS, files)
    statuses = [r["status"] for r in summary]
    print(f"\n{len(summary)} rows ({', '.join(f'{s} {statuses.count(s)}' for s in sorted(set(statuses)))}); "
          f"patched files: " + ", ".join(f"{s} {[f['status'] for f in files].count(s)}"
                                         for s in sorted({f['status'] for f in files}))
          + f"; {time.perf_counter() - start:.0f} s; {args.out}/summary.tsv, files.tsv")
    return 1 if "failed" in statuses else 0


if __name__ == "__main__":
    sys.exit(main())
