"""The verification of the modern sample's diffusers files (evaluation/verify/diffusers_sample.py).

These need torch and diffusers==0.42.1, the second verification environment `.venv-verify5`
(`make verify5-setup`), and the modern corpus (`make zoo-modern`); anywhere else every test
here is skipped. `make test-verify` runs them with

    .venv-verify5/bin/python -m pytest --noconftest -q tests/evaluation/test_verify_diffusers.py

The end-to-end test patches the sample's diffusers files with the main environment's adopter
(`evaluation.patch_zoo --modern`, as `make patch-modern` does); it is skipped when `.venv` is missing.
"""

from __future__ import annotations

import csv
import subprocess
import sys
from pathlib import Path

import pytest

try:
    import diffusers
    import torch  # noqa: F401
except ImportError as exc:  # the main environment: no torch
    pytest.skip(f"torch/diffusers not importable ({exc}); run in .venv-verify5 (make verify5-setup)",
                allow_module_level=True)

if diffusers.__version__ != "0.42.1":
    pytest.skip(f"diffusers {diffusers.__version__} installed, the modern sample needs 0.42.1", allow_module_level=True)

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from evaluation.verify import diffusers_sample  # noqa: E402

CORPUS = ROOT / "modern_models" / diffusers_sample.CORPUS
MOTION = "diffusers/models/unets/unet_motion_model.py"


@pytest.fixture(scope="module")
def corpus() -> Path:
    if not (CORPUS / MOTION).is_file():
        pytest.skip("modern_models/ is missing: run `make zoo-modern`")
    return CORPUS


def altered_copy(tmp_path: Path, corpus: Path, path: str, old: str, new: str) -> Path:
    source = (corpus / path).read_text()
    assert source.count(old) == 1
    copy = tmp_path / path
    copy.parent.mkdir(parents=True, exist_ok=True)
    copy.write_text(source.replace(old, new))
    return copy


def test_a_changed_line_on_the_run_path_is_a_failure(corpus, tmp_path):
    copy = altered_copy(tmp_path, corpus, MOTION, "sample = self.conv_act(sample)", "sample = self.conv_act(sample) * 1.01")
    status, reason = diffusers_sample.verify_file(MOTION, corpus / MOTION, copy)
    assert status == "failed" and "UNetMotionModel" in reason


def test_a_change_in_a_zero_initialised_branch_is_a_failure(corpus, tmp_path):
    """PRX's blocks start with a zero modulation gate, so their MLP adds nothing to the output of
    a freshly built model: the verifier perturbs the weights, or a swapped MLP would pass."""
    path = "diffusers/models/transformers/transformer_prx.py"
    copy = altered_copy(tmp_path, corpus, path, "self.mlp_act(self.gate_proj(x)) * self.up_proj(x)",
                        "self.mlp_act(self.up_proj(x)) * self.gate_proj(x)")
    status, reason = diffusers_sample.verify_file(path, corpus / path, copy)
    assert status == "failed" and "eval" in reason


def test_a_changed_line_that_never_runs_is_not_exercised(corpus, tmp_path):
    """The motion model's tiny run takes the usual path: a line only the NPU path runs is reported as such."""
    copy = altered_copy(tmp_path, corpus, MOTION, "sample = self.conv_out(sample)", "sample = self.conv_out(sample)\n"
                        "        if sample is None:\n            sample = sample + 1")
    status, reason = diffusers_sample.verify_file(MOTION, corpus / MOTION, copy)
    assert status == "not_exercised" and "never ran" in reason


def test_a_file_without_a_declared_tiny_model_is_not_instantiable(corpus):
    path = "diffusers/models/autoencoders/autoencoder_same.py"
    status, reason = diffusers_sample.verify_file(path, corpus / path, corpus / path)
    assert status == "not_instantiable" and "RUNS" in reason


def test_patch_and_verify_the_sampled_diffusers_files_end_to_end(corpus, tmp_path):
    """`make patch-modern` and `make verify-modern` on the sample's diffusers files: every patch verified."""
    main_python = ROOT / ".venv" / "bin" / "python"
    if not main_python.is_file():
        pytest.skip("the main environment (.venv, make setup) patches the files")
    patched, diffs, out = tmp_path / "patched", tmp_path / "patches", tmp_path / "verify"
    subprocess.run([str(main_python), "-m", "evaluation.patch_zoo", "--kernels", "torch", "--modern",
                    diffusers_sample.CORPUS, "--patched", str(patched), "--patches", str(diffs), "--jobs", "2"],
                   cwd=ROOT, check=True, capture_output=True)
    code = diffusers_sample.main(["--patched", str(patched), "--patches", str(diffs), "--out", str(out)])
    with (out / "diffusers-all.tsv").open() as handle:
        rows = list(csv.DictReader(handle, delimiter="\t"))
    # groupnorm_silu: the motion model's head and the two UNets' (get_activation); swiglu: PRX's MLP
    # and the three further shapes' files (activations.py's SwiGLU, Krea2, MiniMax Music 3)
    assert sorted((r["rule"], r["file"].rsplit("/", 1)[-1].split(":")[0], r["status"]) for r in rows) == [
        ("groupnorm_silu", "unet_2d_condition.py", "verified"), ("groupnorm_silu", "unet_3d_condition.py", "verified"),
        ("groupnorm_silu", "unet_motion_model.py", "verified"), ("swiglu", "activations.py", "verified"),
        ("swiglu", "transformer_krea2.py", "verified"), ("swiglu", "transformer_minimax_music3.py", "verified"),
        ("swiglu", "transformer_prx.py", "verified")]
    assert code == 0
