"""The differential-verification harness (evaluation/verify/).

These need torch and transformers==4.34.0, which live in the separate environment
`.venv-verify` (see evaluation/verify/README.md), not in the main test environment: there
every test here is skipped. Run them with

    .venv-verify/bin/python -m pytest --noconftest -q tests/evaluation/test_verify_harness.py

(`--noconftest`: the shared conftest imports the analysis stack, which that environment
does not have.)
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

try:
    import torch  # noqa: F401
    import transformers
except ImportError as exc:  # the main environment: no torch
    pytest.skip(f"torch/transformers not importable ({exc}); run in .venv-verify, see evaluation/verify/README.md",
                allow_module_level=True)

if transformers.__version__ != "4.34.0":
    pytest.skip(f"transformers {transformers.__version__} installed, the zoo needs 4.34.0", allow_module_level=True)

ROOT = Path(__file__).resolve().parents[2]
ZOO = ROOT / "hf_models"
sys.path.insert(0, str(ROOT))

from evaluation.verify import tiny  # noqa: E402
from evaluation.verify.harness import ATOL, RTOL, compare, compare_outputs, run_many, write_tsv  # noqa: E402
from evaluation.verify.loader import load_model_module  # noqa: E402


def zoo_file(model: str) -> Path:
    path = ZOO / f"modeling_{model}.py"
    if not path.is_file():
        pytest.skip(f"{path} missing: run `make zoo`")
    return path


def altered_copy(tmp_path: Path, model: str, cls: str, old: str, new: str) -> Path:
    """A copy of the zoo file with the first `old` after `class <cls>` replaced by `new`."""
    source = zoo_file(model).read_text()
    start = source.index(f"class {cls}(")
    at = source.index(old, start)
    changed = source[:at] + new + source[at + len(old):]
    path = tmp_path / f"modeling_{model}.py"
    path.write_text(changed)
    return path


def test_original_and_patched_load_side_by_side():
    path = zoo_file("bert")
    a = load_model_module("bert", path, "modeling_bert_original")
    b = load_model_module("bert", path, "modeling_bert_patched")
    assert a.__name__ == "transformers.models.bert.modeling_bert_original"
    assert b.__name__ == "transformers.models.bert.modeling_bert_patched"
    assert sys.modules[a.__name__] is a and sys.modules[b.__name__] is b
    assert a.BertModel is not b.BertModel
    # relative imports resolved against the installed package
    from transformers.models.bert.configuration_bert import BertConfig

    assert a.BertConfig is BertConfig is b.BertConfig


def test_owlv2_from_a_later_release_loads():
    module = load_model_module("owlv2", zoo_file("owlv2"), "modeling_owlv2_original")
    assert hasattr(module, "Owlv2Model")


@pytest.mark.parametrize("model", ["bert", "gpt2"])
def test_zoo_file_verifies_against_itself(model):
    result = compare(model, zoo_file(model), zoo_file(model))
    assert result.status == "verified", result.reason
    assert result.max_abs_diff == 0.0
    assert result.outputs >= 1


def test_changed_constant_is_a_failure_with_a_difference(tmp_path):
    patched = altered_copy(tmp_path, "bert", "BertSelfOutput",
                           "self.LayerNorm(hidden_states + input_tensor)",
                           "self.LayerNorm(hidden_states * 1.01 + input_tensor)")
    result = compare("bert", zoo_file("bert"), patched)
    assert result.status == "failed", result.reason
    assert result.max_abs_diff is not None and result.max_abs_diff > ATOL
    assert "not allclose" in result.reason


def test_a_float32_rounding_difference_is_verified_in_float64_and_says_so(tmp_path):
    # the same function, computed through a large intermediate: float32 loses the low bits
    patched = altered_copy(tmp_path, "bert", "BertSelfOutput",
                           "self.LayerNorm(hidden_states + input_tensor)",
                           "self.LayerNorm((hidden_states + 1e4) + input_tensor - 1e4)")
    result = compare("bert", zoo_file("bert"), patched)
    assert result.status == "verified", result.reason
    assert "in float64 (float32 differed:" in result.reason
    assert torch.get_default_dtype() == torch.float32  # restored for whatever runs next


def test_same_outputs_with_other_gradients_is_a_failure(tmp_path):
    # eval outputs are unchanged; nothing upstream of the dense layer gets a gradient
    patched = altered_copy(tmp_path, "bert", "BertSelfOutput",
                           "hidden_states = self.dense(hidden_states)",
                           "hidden_states = self.dense(hidden_states.detach()).detach()")
    result = compare("bert", zoo_file("bert"), patched)
    assert result.status == "failed", result.reason
    assert "train mode gradients" in result.reason  # the first parameter upstream of the detach


def test_verified_covers_training_gradients():
    result = compare("bert", zoo_file("bert"), zoo_file("bert"))
    assert result.status == "verified"
    assert re.search(r"train: outputs and \d+ gradients allclose", result.reason), result.reason


def test_renamed_parameter_is_a_state_dict_failure(tmp_path):
    source = zoo_file("gpt2").read_text()
    changed = re.sub(r"\bself\.c_proj\b", "self.c_proj_renamed", source)
    patched = tmp_path / "modeling_gpt2.py"
    patched.write_text(changed)
    result = compare("gpt2", zoo_file("gpt2"), patched)
    assert result.status == "failed"
    assert "state_dict does not load strictly" in result.reason


def test_broken_patch_is_a_failure_not_a_crash(tmp_path):
    patched = altered_copy(tmp_path, "bert", "BertSelfOutput",
                           "hidden_states = self.dense(hidden_states)",
                           "hidden_states = self.dense(hidden_states)[..., :-1]")
    result = compare("bert", zoo_file("bert"), patched)
    assert result.status == "failed"
    assert "patched forward raises" in result.reason


def test_a_patch_that_kills_its_interpreter_costs_only_its_model(tmp_path):
    patched = altered_copy(tmp_path, "bert", "BertSelfOutput",
                           "hidden_states = self.dense(hidden_states)",
                           "import os; os._exit(3)")
    bert, gpt2 = run_many([("bert", zoo_file("bert"), patched), ("gpt2", zoo_file("gpt2"), zoo_file("gpt2"))],
                          seed=0, timeout=120, n_jobs=1)
    assert bert.status == "failed" and "exit 3" in bert.reason
    assert gpt2.status == "verified", gpt2.reason


def test_missing_package_is_not_instantiable_with_the_reason():
    result = compare("dinat", zoo_file("dinat"), zoo_file("dinat"))
    assert result.status == "not_instantiable"
    assert "natten" in result.reason


def test_tiny_config_shrinks_by_name():
    module = load_model_module("bert", zoo_file("bert"), "modeling_bert_original")
    config = tiny.tiny_config("bert", module)
    assert (config.hidden_size, config.num_hidden_layers, config.num_attention_heads,
            config.intermediate_size) == (32, 2, 2, 64)
    assert tiny.model_class("bert", module).__name__ == "BertModel"


def test_compare_outputs_tolerances():
    x = torch.ones(3)
    assert compare_outputs((x,), (x + ATOL / 2,))[0]
    assert not compare_outputs((x,), (x + 10 * (ATOL + RTOL),))[0]
    assert not compare_outputs((x,), (x, x))[0]  # structure
    assert not compare_outputs((x,), (torch.ones(4),))[0]  # shape
    nan = torch.tensor([float("nan")])
    assert compare_outputs((nan,), (nan.clone(),))[0]


def test_tsv_columns(tmp_path):
    from evaluation.verify.harness import Result

    out = tmp_path / "t.tsv"
    write_tsv([Result("bert", "verified", 0.5, "ok"), Result("x", "failed", 1.0, "differs", 0.25)], out)
    lines = out.read_text().splitlines()
    assert lines[0].split("\t") == ["model", "status", "seconds", "reason"]
    assert lines[2].split("\t")[:3] == ["x", "failed", "1.00"] and "max_abs_diff=0.25" in lines[2]
