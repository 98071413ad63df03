"""The verification of the development corpus's patches (evaluation/verify/dev_corpus.py, make verify-dev).

These need the environment `.venv-verify-dev` (make verify-dev-setup: torch 2.13.0 CPU and the
pinned support packages of requirements-verify-dev.lock) and the development corpus (make zoo-dev);
anywhere else every test here is skipped. `make test-verify` runs them with

    .venv-verify-dev/bin/python -m pytest --noconftest -q tests/evaluation/test_verify_dev.py

The end-to-end test patches the four codebases with the main environment's adopter
(`evaluation.patch_zoo --kernels torch --dev CORPUS`, as make verify-dev does); it is skipped when
`.venv` is missing, and fails rather than skips a missing corpus under ADOPTER_REQUIRE_ZOO=1 (CI).
"""

from __future__ import annotations

import csv
import os
import subprocess
import sys
from pathlib import Path

import pytest

try:
    import einx  # noqa: F401 - x-transformers' dependency: the marker of .venv-verify-dev
    import torch
except ImportError as exc:  # the main environment, or another verification venv
    pytest.skip(f"torch/einx not importable ({exc}); run in .venv-verify-dev (make verify-dev-setup)",
                allow_module_level=True)

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from evaluation.verify import dev_corpus  # noqa: E402
from evaluation.verify.source_tree import SourceTree  # noqa: E402

CORPORA = ROOT / "dev_models"
XT = dev_corpus.XT
XT_MAIN = dev_corpus.XT_MAIN


@pytest.fixture(scope="module")
def corpora() -> Path:
    if not (CORPORA / XT / XT_MAIN).is_file():
        if os.environ.get("ADOPTER_REQUIRE_ZOO"):
            pytest.fail("dev_models/ is missing: run `make zoo-dev`")
        pytest.skip("dev_models/ is missing: run `make zoo-dev`")
    return CORPORA


def altered_copy(tmp_path: Path, corpora: Path, path: str, old: str, new: str) -> Path:
    source = (corpora / XT / path).read_text()
    assert source.count(old) == 1
    copy = tmp_path / path
    copy.parent.mkdir(parents=True, exist_ok=True)
    copy.write_text(source.replace(old, new))
    return copy


def run_named(model: str) -> dev_corpus.Run:
    return next(r for r in dev_corpus.RUNS if r.model.startswith(model))


def test_two_trees_keep_their_modules_apart(corpora, tmp_path):
    copy = altered_copy(tmp_path, corpora, XT_MAIN, "class SoLU(Module):", "class SoLU(Module):\n    altered = True")
    original = SourceTree(corpora / XT, ["x_transformers"])
    patched = SourceTree(corpora / XT, ["x_transformers"], {"x_transformers.x_transformers": copy})
    before = {n for n in sys.modules if n.startswith("x_transformers")}
    with original:
        solu_a = original.module("x_transformers.x_transformers").SoLU
        wrapper_a = original.module("x_transformers").TransformerWrapper  # the package re-exports it
    with patched:
        solu_b = patched.module("x_transformers.x_transformers").SoLU
        assert sys.modules["x_transformers.x_transformers"].__file__ == str(copy.resolve())
        assert patched.module("x_transformers").TransformerWrapper.__module__ == "x_transformers.x_transformers"
    assert not hasattr(solu_a, "altered") and solu_b.altered
    assert wrapper_a.__module__ == "x_transformers.x_transformers"
    assert original.file_of("x_transformers.x_transformers").is_relative_to((corpora / XT).resolve())
    assert {n for n in sys.modules if n.startswith("x_transformers")} == before  # each tree's modules set aside
    with original:  # entered again: the same modules
        assert original.module("x_transformers.x_transformers").SoLU is solu_a


def test_a_changed_line_on_the_run_path_is_a_failure_with_its_tensor(corpora, tmp_path):
    copy = altered_copy(tmp_path, corpora, XT_MAIN, "activated = x.softmax(dim = -1) * x",
                        "activated = x.softmax(dim = -1) * x * 1.01")
    run = run_named("TransformerWrapper(Decoder; SoLU")
    original = dev_corpus._tree(XT, corpora)
    patched = dev_corpus._tree(XT, corpora, {"x_transformers.x_transformers": copy})
    outcome = dev_corpus.compare_run(run, original, patched, copy, set(), dev_corpus.harness.DEFAULT_SEED)
    assert outcome.status == "failed" and outcome.max_abs_diff > 0
    assert outcome.reason.startswith("eval: out") and "not allclose" in outcome.reason


def test_a_changed_file_reaches_the_files_that_import_it(corpora, tmp_path):
    """attend.py is imported by x_transformers.py, which builds the model: the patched tree's
    x_transformers.py must run the altered attend.py, as a patched copy of roi_heads.py must reach
    Faster R-CNN."""
    copy = altered_copy(tmp_path, corpora, "x_transformers/attend.py", "attn = self.attn_fn(sim)",
                        "attn = self.attn_fn(sim * 1.5)")
    run = run_named("TransformerWrapper(Decoder; SoLU")
    original = dev_corpus._tree(XT, corpora)
    patched = dev_corpus._tree(XT, corpora, {"x_transformers.attend": copy})
    line = next(i for i, text in enumerate(copy.read_text().splitlines(), 1) if "sim * 1.5" in text)
    outcome = dev_corpus.compare_run(run, original, patched, copy, {line}, dev_corpus.harness.DEFAULT_SEED)
    assert outcome.status == "failed" and line in outcome.hit


def test_an_unreached_change_is_not_exercised_and_batch_norm_is_checked_with_real_statistics(corpora, tmp_path):
    """A model whose outputs agree but that never runs the changed line is not verified; and the
    BatchNorm statistics the comparison runs with are the data's, not the initial 0 and 1."""
    copy = altered_copy(tmp_path, corpora, XT_MAIN, "class ReluSquared(Module):\n    def forward(self, x):\n",
                        "class ReluSquared(Module):\n    def forward(self, x):\n        x = x * 2\n")
    line = next(i for i, text in enumerate(copy.read_text().splitlines(), 1) if text.strip() == "x = x * 2")
    run = run_named("TransformerWrapper(Decoder; SoLU")
    outcome = dev_corpus.compare_run(run, dev_corpus._tree(XT, corpora),
                                     dev_corpus._tree(XT, corpora, {"x_transformers.x_transformers": copy}),
                                     copy, {line}, dev_corpus.harness.DEFAULT_SEED)
    assert outcome.status == "verified" and line not in outcome.hit  # (verify() then says not_exercised)
    norm = torch.nn.Sequential(torch.nn.Conv2d(3, 4, 3), torch.nn.BatchNorm2d(4))
    dev_corpus._prepare(norm, {"input": torch.randn(2, 3, 8, 8) * 3 + 1}, 0)
    assert not torch.allclose(norm[1].running_var, torch.ones(4)) and norm[1].running_mean.abs().sum() > 0


def test_patch_and_verify_the_development_corpus_end_to_end(corpora, tmp_path):
    """make verify-dev: every patched file verified, or listed with its reason; no failure; at least
    one model built per codebase."""
    main_python = ROOT / ".venv" / "bin" / "python"
    if not main_python.is_file():
        pytest.skip("the main environment (.venv, make setup) patches the files")
    patched, patches, out = tmp_path / "patched", tmp_path / "patches", tmp_path / "verify"
    for codebase in dev_corpus.CODEBASES:
        subprocess.run([str(main_python), "-m", "evaluation.patch_zoo", "--kernels", "torch", "--dev", codebase,
                        "--corpora", str(corpora), "--patched", str(patched / codebase), "--patches",
                        str(patches / codebase), "--jobs", "2"], cwd=ROOT, check=True, capture_output=True)
    code = dev_corpus.main(["--corpora", str(corpora), "--patched", str(patched), "--patches", str(patches),
                            "--out", str(out)])
    with (out / "summary.tsv").open() as handle:
        rows = list(csv.DictReader(handle, delimiter="\t"))
    with (out / "files.tsv").open() as handle:
        files = {(r["codebase"], r["file"]): r for r in csv.DictReader(handle, delimiter="\t")}
    assert code == 0 and not [r for r in rows if r["status"] == "failed"]
    for codebase in dev_corpus.CODEBASES:  # every codebase has models that build, agree and run patched code
        mine = [r for r in rows if r["codebase"] == codebase]
        assert any(r["status"] in ("verified", "not_exercised") and not r["exercised"].startswith("0/") for r in mine)
    assert {r["model"] for r in rows if r["status"] == "unpatched"} >= {
        "resnet18", "mobilenet_v3_small", "convnext (2 stages of 1 block, 16/32 channels)", "llama3 debugmodel, 2 layers"}
    # every patched file has rows, and every one that is not verified says why
    assert {(r["codebase"], r["file"]) for r in rows if r["file"] != "-"} == set(files)
    for row in files.values():
        assert row["status"] == "verified" or row["reason"], row
    # (softmax matches are not patched: the torch set does not rewrite the op the code already runs)
    assert {key[1]: row["status"] for key, row in files.items()} == {
        "litgpt/model.py": "verified",
        "torchtitan/models/qwen3_5/model.py": "verified",
        "torchvision/models/googlenet.py": "verified",
        "torchvision/models/inception.py": "verified",
        "x_transformers/x_transformers.py": "verified",
    }
