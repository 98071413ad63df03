"""adopter-kernels (kernels/) is what a patched model needs, and all of it: its wheel, installed on
its own beside torch and transformers (.venv-verify), runs the zoo's BERT patched by `adopter apply`
(default kernel set: SDPA self-attention) with the same outputs as the original, in an interpreter
that cannot import the analysis package."""

import subprocess
import textwrap
import tomllib

import pytest

from conftest import ROOT
from adopter.api.apply import plan_patches
from adopter.rules.registry import load_rules
from evaluation.zoo import zoo_modules

VERIFY_PYTHON = ROOT / ".venv-verify" / "bin" / "python"

RUN = textwrap.dedent("""
    import importlib.util, sys
    sys.path.insert(0, SITE)
    assert importlib.util.find_spec("adopter") is None, "the analysis package is importable"
    import adopter_kernels
    import torch
    import transformers.models.bert.modeling_bert as original

    spec = importlib.util.spec_from_file_location("transformers.models.bert.patched_bert", PATCHED)
    patched = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(patched)
    config = original.BertConfig(vocab_size=64, hidden_size=32, num_hidden_layers=2, num_attention_heads=4,
                                 intermediate_size=48, max_position_embeddings=32)
    torch.manual_seed(0)
    a = original.BertModel(config).eval()
    b = patched.BertModel(config).eval()
    b.load_state_dict(a.state_dict(), strict=True)
    assert type(b.encoder.layer[0].attention.self).__module__ == "adopter_kernels.attention"
    ids = torch.randint(0, 64, (2, 12))
    mask = torch.ones(2, 12, dtype=torch.long)
    mask[1, 8:] = 0
    with torch.no_grad():
        x, y = a(ids, attention_mask=mask).last_hidden_state, b(ids, attention_mask=mask).last_hidden_state
    torch.testing.assert_close(y, x, rtol=1e-4, atol=1e-5)
    print("adopter_kernels", adopter_kernels.__version__, "from", adopter_kernels.__file__)
""")


@pytest.mark.venv
def test_the_kernels_distribution_alone_runs_a_patched_zoo_model(zoo, tmp_path):
    if not VERIFY_PYTHON.exists():
        pytest.skip("needs .venv-verify (make verify-setup)")
    bert = zoo / "modeling_bert.py"
    report = plan_patches([str(bert)], load_rules(["bert_self_attention"]), jobs=1, cache_dir=None, kernels="default",
                          modules=zoo_modules([bert]))
    (patch,) = report.patches
    assert "from adopter_kernels.attention import BertSelfAttentionSDPA" in patch.patched
    patched = tmp_path / "modeling_bert_patched.py"
    patched.write_text(patch.patched)
    # the wheel built from the repository, installed alone into a folder of its own
    subprocess.run([str(VERIFY_PYTHON), "-m", "pip", "wheel", "--quiet", "--no-deps", "--no-build-isolation",
                    "--disable-pip-version-check", "-w", str(tmp_path / "dist"), str(ROOT / "kernels")],
                   check=True, capture_output=True, timeout=300)
    version = tomllib.loads((ROOT / "kernels" / "pyproject.toml").read_text())["project"]["version"]
    (wheel,) = (tmp_path / "dist").glob(f"adopter_kernels-{version}-*.whl")
    site = tmp_path / "site"
    subprocess.run([str(VERIFY_PYTHON), "-m", "pip", "install", "--quiet", "--no-deps", "--disable-pip-version-check",
                    "--target", str(site), str(wheel)], check=True, capture_output=True, timeout=300)
    assert sorted(p.name for p in (site / "adopter_kernels").glob("*.py")) == ["__init__.py", "attention.py", "library.py"]
    # -I: no current folder, PYTHONPATH or user site on the path; run from elsewhere than the repository
    script = f"SITE = {str(site)!r}\nPATCHED = {str(patched)!r}\n" + RUN
    done = subprocess.run([str(VERIFY_PYTHON), "-I", "-c", script], cwd=tmp_path, capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    assert f"adopter_kernels {version} from {site}" in done.stdout  # (its __version__ is the distribution's)
