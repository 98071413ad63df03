"""The verification harness on today's code: the modern sample's transformers 5.23.0 files.

These need torch and transformers==5.23.0, the second verification environment
`.venv-verify5` (`make verify5-setup`), and the modern corpus (`make zoo-modern`); anywhere
else every test here is skipped. `make test-verify` runs them with

    .venv-verify5/bin/python -m pytest --noconftest -q tests/evaluation/test_verify_modern.py

The last test patches two sampled files with the main environment's adopter
(`evaluation.patch_zoo --modern`, as `make patch-modern` does) and verifies every patch, as
`make verify-modern` does; it is skipped when `.venv` is missing.
"""

from __future__ import annotations

import csv
import subprocess
import sys
from pathlib import Path

import pytest

try:
    import torch  # noqa: F401
    import transformers
except ImportError as exc:  # the main environment: no torch
    pytest.skip(f"torch/transformers not importable ({exc}); run in .venv-verify5 (make verify5-setup)",
                allow_module_level=True)

if transformers.__version__ != "5.23.0":
    pytest.skip(f"transformers {transformers.__version__} installed, the modern sample needs 5.23.0",
                allow_module_level=True)

ROOT = Path(__file__).resolve().parents[2]
CORPUS = "transformers-5.23.0"
sys.path.insert(0, str(ROOT))

from evaluation.verify import harness, patches, tiny, tiny_modern  # noqa: E402,F401 (tiny_modern installs its table)
from evaluation.verify.harness import ATOL, compare  # noqa: E402
from evaluation.verify.loader import load_model_module, package_of  # noqa: E402


@pytest.fixture(scope="module")
def modern() -> dict[str, Path]:
    files = harness.modern_files()
    if not all(p.is_file() for p in files.values()):
        pytest.skip("modern_models/ is missing: run `make zoo-modern`")
    return files


def altered_copy(tmp_path: Path, original: Path, cls: str, old: str, new: str) -> Path:
    """A copy keeping the wheel's layout (so it runs in the same package), with the first
    `old` after `class <cls>` replaced by `new`."""
    source = original.read_text()
    at = source.index(old, source.index(f"class {cls}("))
    path = tmp_path / "transformers" / "models" / original.parent.name / original.name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(source[:at] + new + source[at + len(old):])
    return path


def test_the_sample_lists_the_30_transformers_files(modern):
    assert len(modern) == 30
    assert modern["data2vec_text"].parts[-3:] == ("models", "data2vec", "modeling_data2vec_text.py")


def test_a_file_runs_in_the_package_it_sits_in(modern):
    path = modern["data2vec_text"]
    assert package_of("data2vec_text", path) == "data2vec"
    assert package_of("bert", Path("hf_models/modeling_bert.py")) == "bert"  # the zoo's flat layout
    module = load_model_module("data2vec_text", path, "modeling_data2vec_text_original")
    assert module.__name__ == "transformers.models.data2vec.modeling_data2vec_text_original"
    from transformers.models.data2vec.configuration_data2vec_text import Data2VecTextConfig

    assert module.Data2VecTextConfig is Data2VecTextConfig  # relative imports resolved in the installed 5.23.0


def test_the_modern_table_of_exceptions_is_used():
    assert tiny.TRANSFORMERS_MAJOR == 5
    assert tiny.override_for("voxtral").cls == "VoxtralEncoder"
    assert tiny.override_for("bert") == tiny.Override()  # the zoo's table is not consulted


@pytest.mark.parametrize("model", ["starcoder2", "data2vec_text", "voxtral"])
def test_modern_file_verifies_against_itself(modern, model):
    result = compare(model, modern[model], modern[model])
    assert result.status == "verified", result.reason
    assert result.max_abs_diff == 0.0
    assert "train: outputs and" in result.reason


def test_changed_constant_in_a_modern_mlp_is_a_failure(modern, tmp_path):
    patched = altered_copy(tmp_path, modern["starcoder2"], "Starcoder2MLP",
                           "hidden_states = self.c_proj(hidden_states)",
                           "hidden_states = self.c_proj(hidden_states * 1.01)")
    result = compare("starcoder2", modern["starcoder2"], patched)
    assert result.status == "failed", result.reason
    assert result.max_abs_diff is not None and result.max_abs_diff > ATOL


def test_the_patched_copy_of_a_tower_runs_its_own_code(modern, tmp_path):
    # VoxtralModel builds its audio tower from the installed package; the override builds the
    # tower from the loaded copy, so a change there is seen
    patched = altered_copy(tmp_path, modern["voxtral"], "VoxtralEncoderLayer",
                           "hidden_states = self.fc2(hidden_states)",
                           "hidden_states = self.fc2(hidden_states) * 1.01")
    assert compare("voxtral", modern["voxtral"], patched).status == "failed"


def test_patch_and_verify_two_sampled_files_end_to_end(modern, tmp_path):
    """`make patch-modern` and `make verify-modern` on two files: every patch verified."""
    main_python = ROOT / ".venv" / "bin" / "python"
    if not main_python.is_file():
        pytest.skip("the main environment (.venv, make setup) patches the files")
    patched, diffs, out = tmp_path / "patched", tmp_path / "patches", tmp_path / "verify"
    subprocess.run([str(main_python), "-m", "evaluation.patch_zoo", "--kernels", "torch", "--modern", CORPUS,
                    "--models", "starcoder2,data2vec_text", "--patched", str(patched), "--patches", str(diffs),
                    "--jobs", "2"], cwd=ROOT, check=True, capture_output=True)
    assert (patched / "all" / "transformers" / "models" / "data2vec" / "modeling_data2vec_text.py").is_file()
    tables = list(diffs.glob("*/patches.tsv"))
    assert (diffs / "rotary" / "patches.tsv") in tables  # (starcoder2's rotary: a rule with several shape files)
    for table in tables:  # one row per match: each shape file of a rule once made its set again
        rows = table.read_text().splitlines()[1:]
        assert len(rows) == len(set(rows)), table
    code = patches.main(["--modern", CORPUS, "--patched", str(patched), "--patches", str(diffs),
                         "--out", str(out), "--sets", "all", "--jobs", "2"])
    with (out / "all.tsv").open() as handle:
        rows = list(csv.DictReader(handle, delimiter="\t"))
    assert {Path(r["file"]).name for r in rows} == {"modeling_starcoder2.py", "modeling_data2vec_text.py"}
    assert [r for r in rows if r["status"] != "verified"] == []
    assert code == 0
