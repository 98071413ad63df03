"""Differential verification: does a patched modeling file compute what the original does?

For one model, `compare(model, original_path, patched_path)` loads both files as modules
of the installed transformers (`loader.py`), builds a tiny random model from each with the
same seed (`tiny.py`), loads the original's `state_dict` into the patched model with
`strict=True`, runs both in eval mode under `torch.no_grad()` on the same inputs, and
compares every output tensor with `torch.allclose(rtol=RTOL, atol=ATOL, equal_nan=True)`.

Statuses:
  verified          outputs equal (same structure, shapes, dtypes, values within tolerance)
  failed            the original ran and the patched copy differs: other outputs, a
                    state_dict that does not load strictly, or a patched copy that does
                    not build, raises, hangs or kills its interpreter; the reason says how
  not_instantiable  the original itself cannot be built or run here; reason says why

CLI (models run in `--jobs` worker interpreters; a worker that crashes or exceeds
`--timeout` seconds on a model is killed and replaced, so that costs only that model;
`--fresh` gives every model a new interpreter):

    python -m evaluation.verify.harness [--models bert,gpt2] [--out build/verify/instantiable.tsv]
        [--patched-dir DIR] [--jobs N] [--timeout S] [--fresh]

Without `--patched-dir` each zoo file is compared with itself (a second load of the same
file under the alias `modeling_<m>_patched`): a self-check of the harness, where
`failed` must be 0. With `--patched-dir DIR`, `DIR/modeling_<m>.py` is the patched copy
(models without one there are compared with themselves).
"""

from __future__ import annotations

import argparse
import contextlib
import csv
import itertools
import json
import math
import os
import statistics
import subprocess
import sys
import time
import traceback
import warnings
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

RTOL = 1e-4
ATOL = 1e-5
GRAD_RTOL = 1e-3  # gradients sum over the batch and sequence: looser than the outputs
GRAD_ATOL = 1e-5
DEFAULT_SEED = 0
DEFAULT_TIMEOUT = 300
ZOO = Path(__file__).resolve().parents[2] / "hf_models"
MODERN = Path(__file__).resolve().parents[2] / "modern_models"
SAMPLE = Path(__file__).resolve().parents[2] / "evaluation" / "modern" / "sample.tsv"
TSV_COLUMNS = ("model", "status", "seconds", "reason")
WATCH: dict[str, list[int]] = {}  # patched file -> lines whose execution workers record (`Result.executed`)


@dataclass
class Result:
    model: str
    status: str  # verified | failed | not_instantiable
    seconds: float = 0.0
    reason: str = ""
    max_abs_diff: float | None = None
    outputs: int = 0  # number of tensors compared
    executed: list[int] | None = None  # lines of the patched file that ran (with `watch_lines`)
    mismatch: bool = False  # failed on values (not an exception): worth a float64 re-run


def _quiet() -> None:
    warnings.filterwarnings("ignore")
    try:
        from transformers.utils import logging as hf_logging

        hf_logging.set_verbosity_error()
    except ImportError:
        pass


def flatten_outputs(value: Any, prefix: str = "out") -> list[tuple[str, Any]]:
    """(path, leaf) pairs of a model output: ModelOutput/dict by key, tuple/list by index."""
    import torch

    if isinstance(value, torch.Tensor):
        return [(prefix, value)]
    if isinstance(value, dict):  # ModelOutput is an OrderedDict of its non-None fields
        items: list[tuple[str, Any]] = []
        for key, item in value.items():
            items.extend(flatten_outputs(item, f"{prefix}.{key}"))
        return items
    if isinstance(value, (tuple, list)):
        items = []
        for i, item in enumerate(value):
            items.extend(flatten_outputs(item, f"{prefix}[{i}]"))
        return items
    if value is None or isinstance(value, (int, float, str, bool)):
        return [(prefix, value)]
    # Caches and other objects: compare their tensors when they expose them.
    if hasattr(value, "__dict__"):
        return flatten_outputs(dict(vars(value)), prefix)
    return [(prefix, repr(type(value)))]


def compare_outputs(a: Any, b: Any) -> tuple[bool, str, float, int]:
    """(equal, first difference, max |a-b| over tensors of equal shape, tensors compared)."""
    import torch

    fa, fb = flatten_outputs(a), flatten_outputs(b)
    if [k for k, _ in fa] != [k for k, _ in fb]:
        return False, f"output structure differs: {[k for k, _ in fa]} vs {[k for k, _ in fb]}", math.inf, 0
    first = ""
    worst = 0.0
    count = 0
    for (key, x), (_, y) in zip(fa, fb):
        if isinstance(x, torch.Tensor) or isinstance(y, torch.Tensor):
            if not (isinstance(x, torch.Tensor) and isinstance(y, torch.Tensor)):
                first = first or f"{key}: tensor vs non-tensor"
                worst = math.inf
                continue
            count += 1
            if x.shape != y.shape or x.dtype != y.dtype:
                first = first or f"{key}: {tuple(x.shape)}/{x.dtype} vs {tuple(y.shape)}/{y.dtype}"
                worst = math.inf
                continue
            if x.numel() == 0:
                continue
            if x.is_floating_point() or x.is_complex():
                diff = (x - y).abs()
                finite = torch.isfinite(x) & torch.isfinite(y)
                if finite.any():
                    worst = max(worst, float(diff[finite].max()))
                if not torch.allclose(x, y, rtol=RTOL, atol=ATOL, equal_nan=True):
                    first = first or f"{key}: not allclose (max abs diff {float(diff[finite].max()) if finite.any() else 'nan'})"
                    if not finite.any() or torch.isnan(x).ne(torch.isnan(y)).any():
                        worst = max(worst, math.inf) if torch.isnan(x).ne(torch.isnan(y)).any() else worst
            elif not torch.equal(x, y):
                worst = max(worst, float((x.double() - y.double()).abs().max()))
                first = first or f"{key}: integer tensors differ"
        elif x != y:
            first = first or f"{key}: {x!r} vs {y!r}"
    return not first, first, worst, count


def _reason(exc: BaseException) -> str:
    text = f"{type(exc).__name__}: {exc}".replace("\t", " ").replace("\n", " ")
    return text[:300]


def _missing_package_reason(exc: BaseException) -> str | None:
    """'needs <pkg>' when the exception comes from a package that is not installed."""
    text = str(exc)
    for pkg in ("natten", "detectron2", "timm", "torchvision", "scipy", "librosa", "soundfile",
                "phonemizer", "sentencepiece", "pytesseract", "faiss", "datasets", "accelerate",
                "xformers", "apex", "tensorflow", "jax", "einops", "pandas", "sklearn"):
        if pkg in text.lower():
            return f"needs {pkg} (not installed): {_reason(exc)}"
    if isinstance(exc, ImportError):
        return f"missing package: {_reason(exc)}"
    return None


def _run(net: Any, inputs: dict, seed: int) -> Any:
    import torch

    torch.manual_seed(seed)  # any sampling inside forward (e.g. ViT-MAE masking) repeats
    with torch.no_grad():
        return net(**inputs)


class _LineWatch:
    """Records which of some lines of one file run (sys.settrace, only in that file's frames)."""

    def __init__(self, path: Path, lines: set[int]):
        self.path, self.lines, self.hit = str(path), lines, set()

    def _global(self, frame, event, arg):
        return self._local if frame.f_code.co_filename == self.path else None

    def _local(self, frame, event, arg):
        if frame.f_lineno in self.lines:
            self.hit.add(frame.f_lineno)
        return self._local

    def __enter__(self):
        sys.settrace(self._global)
        return self

    def __exit__(self, *exc):
        sys.settrace(None)


def parse_label(label: str) -> tuple[str, str | None, dict]:
    """`model[:Class][@key=value[&key=value...]]` -> (model, class name, config values)."""
    import ast as _ast

    spec, _, extra = label.partition("@")
    model, _, cls_name = spec.partition(":")
    config = {}
    for item in filter(None, extra.split("&")):
        key, _, value = item.partition("=")
        config[key] = _ast.literal_eval(value)
    return model, cls_name or None, config


def compare(model: str, original_path: Path, patched_path: Path, seed: int = DEFAULT_SEED,
            on_original_ok=None, cls_name: str | None = None, config_extra: dict | None = None,
            watch_lines: set[int] | None = None) -> Result:
    """`compare_once` in float32; when values differ beyond tolerance, once more in float64.

    Float32 rounding of a reordered computation (a fused kernel sums in another order) can
    be amplified past the tolerances, e.g. through a contrastive loss into the gradients of
    a batch-normalised tower; a rewrite that changed the function differs in float64 too,
    so a patch verified only in float64 says so in its reason."""
    import torch

    first = compare_once(model, original_path, patched_path, seed, on_original_ok, cls_name, config_extra, watch_lines)
    if first.status != "failed" or not first.mismatch or torch.get_default_dtype() != torch.float32:
        return first
    torch.set_default_dtype(torch.float64)
    try:
        again = compare_once(model, original_path, patched_path, seed, None, cls_name, config_extra, watch_lines)
    finally:
        torch.set_default_dtype(torch.float32)
    if again.status != "verified":
        return first
    again.reason = f"{again.reason}; in float64 (float32 differed: {first.reason.split(': ', 1)[-1][:120]})"
    again.seconds = round(first.seconds + again.seconds, 3)
    return again


def compare_once(model: str, original_path: Path, patched_path: Path, seed: int = DEFAULT_SEED,
                 on_original_ok=None, cls_name: str | None = None, config_extra: dict | None = None,
                 watch_lines: set[int] | None = None) -> Result:
    """Build `model` from both files with `seed`, run both, compare. In-process.

    `cls_name` builds that class of the file instead of the default one (`tiny.build`),
    e.g. `BertForMaskedLM` when the patch touches a head the base model lacks.

    `config_extra` sets config values (e.g. to take the other branch of an `if`);
    `watch_lines` are lines of the patched file whose execution is recorded in `executed`.

    `on_original_ok()` is called once the original has run (the CLI's workers use it to
    tell a patched copy that hangs or kills the interpreter from an original that does)."""
    _quiet()
    import torch

    import transformers.modeling_utils  # noqa: F401 - the one-off import is not the model's time

    from evaluation.verify import tiny, tiny_modern  # noqa: F401 - tiny_modern installs its table under transformers 5
    from evaluation.verify.loader import load_model_module, package_of

    start = time.perf_counter()
    built = ""

    watch = _LineWatch(Path(patched_path).resolve(), set(watch_lines or ()))
    package = package_of(model, Path(original_path))  # the patched copy runs in the original's package

    def done(status: str, reason: str = "", diff: float | None = None, count: int = 0, mismatch: bool = False) -> Result:
        label = f"{model}:{cls_name}" if cls_name else model
        return Result(label, status, round(time.perf_counter() - start, 3), f"{built}{reason}", diff, count,
                      sorted(watch.hit) if watch_lines is not None else None, mismatch)

    # The original: any problem here means the model is not instantiable here.
    try:
        original = load_model_module(model, Path(original_path), f"modeling_{model}_original", package)
        net_a, inputs = tiny.build(model, original, seed, cls_name, config_extra)
        built = f"{type(net_a).__name__}: "
        out_a = _run(net_a, inputs, seed)
    except tiny.NotInstantiable as exc:
        return done("not_instantiable", str(exc)[:300])
    except Exception as exc:  # noqa: BLE001 - every failure becomes a reason
        return done("not_instantiable", _missing_package_reason(exc) or _reason(exc))

    # The patched copy: the original works, so any problem here is a failure of the patch.
    if on_original_ok is not None:
        on_original_ok()
    try:
        patched = load_model_module(model, Path(patched_path), f"modeling_{model}_patched", package)
        with watch:
            net_b, _ = tiny.build(model, patched, seed, cls_name, config_extra)
    except Exception as exc:  # noqa: BLE001
        return done("failed", f"patched copy does not build: {_reason(exc)}")
    try:
        net_b.load_state_dict(net_a.state_dict(), strict=True)
    except Exception as exc:  # noqa: BLE001
        return done("failed", f"state_dict does not load strictly: {_reason(exc)}")
    try:
        with watch:
            out_b = _run(net_b, inputs, seed)
    except Exception as exc:  # noqa: BLE001
        return done("failed", f"patched forward raises: {_reason(exc)}")
    equal, first, worst, count = compare_outputs(out_a, out_b)
    if count == 0:
        return done("not_instantiable", "forward returned no tensor to compare")
    if not equal:
        return done("failed", first, worst, count, mismatch=True)
    eval_note = f"eval: {count} tensors allclose (rtol={RTOL}, atol={ATOL})"

    # Training mode, dropout off: same outputs and same gradients for every parameter.
    try:
        train_a, train_inputs = tiny.build(model, original, seed, cls_name, config_extra, train=True)
        weights = {k: v.clone() for k, v in train_a.state_dict().items()}  # before the forward moves BN statistics
        loss_a = _backward(train_a, train_inputs, seed)
    except Exception as exc:  # noqa: BLE001 - the original does not train here; eval stands alone
        return done("verified", f"{eval_note}; train mode not compared (original: {_reason(exc)[:120]})", worst, count)
    if loss_a is None:
        return done("verified", f"{eval_note}; train mode not compared (no differentiable output)", worst, count)
    try:
        with watch:
            train_b, _ = tiny.build(model, patched, seed, cls_name, config_extra, train=True)
            train_b.load_state_dict(weights, strict=True)
            loss_b = _backward(train_b, train_inputs, seed)
    except Exception as exc:  # noqa: BLE001
        return done("failed", f"train mode: patched copy raises: {_reason(exc)}")
    equal, first, worst_t, _ = compare_outputs(loss_a, loss_b)
    if not equal:
        return done("failed", f"train mode outputs: {first}", worst_t, count, mismatch=True)
    try:
        mapped, _ = tiny.build(model, patched, seed, cls_name, config_extra, train=True)
        equal, first, grads = compare_gradients(train_a, train_b, mapped)
    except Exception as exc:  # noqa: BLE001
        return done("failed", f"train mode: gradients cannot be mapped: {_reason(exc)}")
    if not equal:
        return done("failed", f"train mode gradients: {first}", None, count, mismatch=True)
    return done("verified", f"{eval_note}; train: outputs and {grads} gradients allclose "
                            f"(rtol={GRAD_RTOL}, atol={GRAD_ATOL})", max(worst, worst_t), count)


@contextlib.contextmanager
def _repeatable_reseeding(seed: int):
    """`torch.seed()` draws a seed from the system (Reformer's reversible layers call it in
    training mode to replay their dropout): within this block it draws the same sequence in
    every run, so both models see the same dropout masks."""
    import torch

    draws = itertools.count(seed)
    original = torch.seed

    def repeatable() -> int:
        value = next(draws)
        torch.manual_seed(value)
        return value

    torch.seed = repeatable
    try:
        yield
    finally:
        torch.seed = original


def _backward(net: Any, inputs: dict, seed: int) -> Any:
    """Run `net` in training mode and back-propagate a fixed random projection of every
    differentiable output tensor; returns the outputs (None when none is differentiable)."""
    import torch

    torch.manual_seed(seed)
    with _repeatable_reseeding(seed):
        outputs = net(**inputs)
    gen = torch.Generator().manual_seed(seed)
    loss = None
    for _, leaf in flatten_outputs(outputs):
        if isinstance(leaf, torch.Tensor) and leaf.requires_grad and leaf.is_floating_point():
            weight = torch.randn(leaf.shape, generator=gen, dtype=leaf.dtype)
            term = (leaf * weight).sum()
            loss = term if loss is None else loss + term
    if loss is None:
        return None
    loss.backward()
    return outputs


def compare_gradients(net_a: Any, net_b: Any, mapped: Any) -> tuple[bool, str, int]:
    """(equal, first difference, parameters compared): every parameter gradient of the
    patched `net_b` against the original's. Parameter names may differ (a fused kernel
    may own a moved parameter), so A's gradients are loaded as a state_dict into `mapped`,
    another instance of B: the patched model's own load hooks map old names to new ones."""
    import torch

    grads = {}
    for key, value in net_a.state_dict(keep_vars=True).items():
        if isinstance(value, torch.nn.Parameter):
            grads[key] = value.grad if value.grad is not None else torch.zeros_like(value)
        else:
            grads[key] = value.detach()
    mapped.load_state_dict(grads, strict=True)
    expected = dict(mapped.named_parameters())
    count = 0
    for name, param in net_b.named_parameters():
        want = expected[name].detach()
        got = param.grad if param.grad is not None else torch.zeros_like(param)
        count += 1
        if not torch.allclose(got, want, rtol=GRAD_RTOL, atol=GRAD_ATOL, equal_nan=True):
            return False, f"{name}: max abs diff {float((got - want).abs().max()):.3g}", count
    return True, "", count


# --------------------------------------------------------------------------- CLI


def zoo_models(zoo: Path = ZOO) -> list[str]:
    return sorted(p.stem[len("modeling_"):] for p in zoo.glob("modeling_*.py"))


def modern_files(sample: Path = SAMPLE, corpora: Path = MODERN) -> dict[str, Path]:
    """Model id -> original file, for the sample's files of the installed transformers
    (corpus `transformers-<version>`; in `.venv-verify5` that is 5.23.0): the paths keep the
    wheel's layout, `<corpora>/<corpus>/transformers/models/<package>/modeling_<id>.py`."""
    import transformers

    corpus = f"transformers-{transformers.__version__}"
    files = {}
    with Path(sample).open() as handle:
        for row in csv.DictReader(handle, delimiter="\t"):
            if row["corpus"] == corpus:
                path = Path(corpora) / corpus / row["path"]
                files[path.stem[len("modeling_"):]] = path
    if not files:
        raise SystemExit(f"{sample} has no file of {corpus} (is this the right venv?)")
    return files


def _safe_compare(label: str, original: Path, patched: Path, seed: int, on_original_ok=None,
                  watch_lines: list[int] | None = None) -> Result:
    model, cls_name, config = parse_label(label)
    try:
        return compare(model, original, patched, seed, on_original_ok, cls_name, config,
                       set(watch_lines) if watch_lines is not None else None)
    except BaseException as exc:  # noqa: BLE001 - report, never crash silently
        traceback.print_exc()
        return Result(label, "not_instantiable", 0.0, f"harness error: {_reason(exc)}")


def _serve() -> int:
    """Worker entry: one JSON job per stdin line, one `RESULT {json}` line per job."""
    for line in sys.stdin:
        if not line.strip():
            continue
        job = json.loads(line)
        def original_ok() -> None:
            sys.stdout.write("\nORIGINAL_OK\n")
            sys.stdout.flush()

        result = _safe_compare(job["model"], Path(job["original"]), Path(job["patched"]), job["seed"], original_ok,
                               job.get("watch"))
        sys.stdout.write("\nRESULT " + json.dumps(asdict(result)) + "\n")
        sys.stdout.flush()
    return 0


def _worker_env() -> tuple[dict, str]:
    env = dict(os.environ)
    root = str(Path(__file__).resolve().parents[2])
    # the root (for `adopter_kernels`) and the reference implementations of kernels that
    # cannot be installed here (epoi, xformers' Triton softmax): see reference/README.md
    paths = [root, str(Path(__file__).resolve().parent / "reference")]
    env["PYTHONPATH"] = os.pathsep.join(paths + ([env["PYTHONPATH"]] if env.get("PYTHONPATH") else []))
    env.setdefault("OMP_NUM_THREADS", "1")  # jobs run side by side; one thread each
    return env, root


class Worker:
    """A `--serve` interpreter that runs models one after another; replaced after a crash
    or a timeout, so a model that kills or hangs its interpreter costs only itself."""

    def __init__(self) -> None:
        import queue
        import tempfile
        import threading

        env, root = _worker_env()
        self.stderr = tempfile.TemporaryFile(mode="w+")
        self.proc = subprocess.Popen([sys.executable, "-m", "evaluation.verify.harness", "--serve"],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self.stderr,
                                     text=True, bufsize=1, env=env, cwd=root)
        self.lines: "queue.Queue[str | None]" = queue.Queue()
        self.original_ok = False
        self.eof = False
        threading.Thread(target=self._pump, daemon=True).start()

    def _pump(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.lines.put(line)
        self.lines.put(None)

    def run(self, model: str, original: Path, patched: Path, seed: int, timeout: float) -> Result | None:
        """The result, or None when the worker died or timed out (it is then unusable)."""
        import queue

        assert self.proc.stdin is not None
        job = {"model": model, "original": str(original), "patched": str(patched), "seed": seed,
               "watch": WATCH.get(str(patched))}
        try:
            self.proc.stdin.write(json.dumps(job) + "\n")
            self.proc.stdin.flush()
        except (BrokenPipeError, OSError):
            return None
        deadline = time.monotonic() + timeout
        self.original_ok = False
        self.eof = False
        while True:
            try:
                line = self.lines.get(timeout=max(0.0, deadline - time.monotonic()))
            except queue.Empty:
                return None
            if line is None:  # stdout closed: the interpreter is gone
                self.eof = True
                return None
            if line.startswith("ORIGINAL_OK"):
                self.original_ok = True
            elif line.startswith("RESULT "):
                return Result(**json.loads(line[len("RESULT "):]))

    def last_error(self) -> str:
        self.stderr.seek(0)
        lines = [l for l in self.stderr.read().splitlines() if l.strip() and "Warning" not in l]
        return lines[-1][:250] if lines else "no output"

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait()
        self.stderr.close()


def run_isolated(model: str, original: Path, patched: Path, seed: int, timeout: float) -> Result:
    """`compare` in a fresh interpreter of its own, with a timeout."""
    start = time.perf_counter()
    worker = Worker()
    try:
        result = worker.run(model, original, patched, seed, timeout)
        if result is None:
            result = _lost(model, worker, time.perf_counter() - start, timeout)
        return result
    finally:
        worker.close()


def _lost(model: str, worker: Worker, seconds: float, timeout: float) -> Result:
    """The result of a job whose interpreter hung or died: `failed` once the original had
    run (the patched copy did it), else `not_instantiable`."""
    if worker.eof:
        try:
            worker.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            pass
    code = worker.proc.poll()
    what = f"timeout after {timeout:.0f} s" if code is None else f"interpreter died (exit {code}): {worker.last_error()}"
    if worker.original_ok:
        return Result(model, "failed", round(seconds, 3), f"patched copy: {what}")
    return Result(model, "not_instantiable", round(seconds, 3), what)


def run_many(jobs: list[tuple[str, Path, Path]], seed: int, timeout: float, n_jobs: int,
             fresh: bool = False, on_result=None) -> list[Result]:
    """Every job in `n_jobs` worker interpreters (a new one per model with `fresh`)."""
    import queue
    import threading

    todo: "queue.Queue[tuple[str, Path, Path]]" = queue.Queue()
    for job in jobs:
        todo.put(job)
    results: dict[str, Result] = {}
    lock = threading.Lock()

    def drive() -> None:
        worker: Worker | None = None
        try:
            while True:
                try:
                    model, original, patched = todo.get_nowait()
                except queue.Empty:
                    return
                if fresh:
                    result = run_isolated(model, original, patched, seed, timeout)
                else:
                    worker = worker or Worker()
                    start = time.perf_counter()
                    result = worker.run(model, original, patched, seed, timeout)
                    if result is None:
                        result = _lost(model, worker, time.perf_counter() - start, timeout)
                        worker.close()
                        worker = None
                with lock:
                    results[model] = result
                    if on_result:
                        on_result(result)
        finally:
            if worker is not None:
                worker.close()

    threads = [threading.Thread(target=drive) for _ in range(max(1, min(n_jobs, len(jobs))))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return [results[m] for m, _, _ in jobs]


def write_tsv(results: list[Result], out: Path) -> None:
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_suffix(out.suffix + ".tmp")
    with tmp.open("w") as handle:
        handle.write("\t".join(TSV_COLUMNS) + "\n")
        for r in results:
            reason = r.reason.replace("\t", " ").replace("\n", " ")
            if r.status == "failed" and r.max_abs_diff is not None:
                reason = f"max_abs_diff={r.max_abs_diff:.3g}; {reason}"
            handle.write(f"{r.model}\t{r.status}\t{r.seconds:.2f}\t{reason}\n")
    tmp.replace(out)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Differential verification of zoo modeling files.")
    parser.add_argument("--models", help="comma-separated model names, each optionally `model:ClassName` "
                        "to build that class of the file (default: the whole zoo, default classes)")
    parser.add_argument("--zoo", type=Path, default=ZOO, help="directory of the original modeling_<m>.py files")
    parser.add_argument("--patched-dir", type=Path, help="directory of patched modeling_<m>.py copies")
    parser.add_argument("--modern", action="store_true",
                        help="the transformers files of the modern sample (--sample, under --corpora) "
                        "instead of the zoo; needs the transformers they come from (.venv-verify5); "
                        "--patched-dir then keeps the wheel's layout (DIR/transformers/models/<package>/...)")
    parser.add_argument("--sample", type=Path, default=SAMPLE)
    parser.add_argument("--corpora", type=Path, default=MODERN)
    parser.add_argument("--out", type=Path, default=None,
                        help="default build/verify/instantiable.tsv (--modern: build/verify-modern/instantiable.tsv)")
    parser.add_argument("--jobs", type=int, default=max(1, os.cpu_count() or 1))
    parser.add_argument("--timeout", type=float, default=DEFAULT_TIMEOUT, help="seconds per model")
    parser.add_argument("--seed", type=int, default=DEFAULT_SEED)
    parser.add_argument("--fresh", action="store_true",
                        help="a new interpreter per model (slower: ~3 s of imports each)")
    parser.add_argument("--serve", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)

    if args.serve:
        return _serve()
    args.out = args.out or Path("build/verify-modern/instantiable.tsv" if args.modern else "build/verify/instantiable.tsv")

    modern = modern_files(args.sample, args.corpora) if args.modern else {}
    models = args.models.split(",") if args.models else (sorted(modern) if args.modern else zoo_models(args.zoo))
    jobs = []
    for label in models:
        model = label.partition(":")[0].partition("@")[0]
        if args.modern:
            if model not in modern:
                print(f"{model}: not a transformers file of {args.sample}", file=sys.stderr)
                return 2
            original = modern[model]
            relative = original.relative_to(args.corpora / original.relative_to(args.corpora).parts[0])
        else:
            original = args.zoo / f"modeling_{model}.py"
            relative = Path(original.name)
        if not original.is_file():
            print(f"{model}: no {original}", file=sys.stderr)
            return 2
        patched = original
        if args.patched_dir and (args.patched_dir / relative).is_file():
            patched = args.patched_dir / relative
        jobs.append((label, original.resolve(), patched.resolve()))

    def show(r: Result) -> None:
        extra = f" max_abs_diff={r.max_abs_diff:.3g}" if r.status == "failed" and r.max_abs_diff is not None else ""
        print(f"{r.model:32s} {r.status:17s} {r.seconds:7.2f}s {r.reason[:110]}{extra}", flush=True)

    start = time.perf_counter()
    ordered = run_many(jobs, args.seed, args.timeout, args.jobs, fresh=args.fresh, on_result=show)
    wall = time.perf_counter() - start
    write_tsv(ordered, args.out)
    counts = {s: sum(r.status == s for r in ordered) for s in ("verified", "failed", "not_instantiable")}
    seconds = [r.seconds for r in ordered]
    print(f"\n{len(ordered)} models: verified {counts['verified']}, failed {counts['failed']}, "
          f"not_instantiable {counts['not_instantiable']}")
    print(f"wall {wall:.1f} s with {args.jobs} jobs; per model (load+build+forward of both copies): "
          f"median {statistics.median(seconds) if seconds else 0:.2f} s, total {sum(seconds):.1f} s; "
          f"tolerances rtol={RTOL} atol={ATOL}; table {args.out}")
    return 1 if counts["failed"] else 0


if __name__ == "__main__":
    sys.exit(main())
