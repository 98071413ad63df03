"""`adopter.api.patch` on real models (venv tier): transformers 4.34's BERT (default kernel set:
SDPA self-attention, a module kernel that subclasses the class it replaces) and Llama (torch set:
RMSNorm, rotary, SwiGLU) imported through the hook, against the same modules imported as they
are: the same state_dict keys, and outputs and gradients allclose in eval and train mode.

It runs in .venv-verify (torch, transformers) with the analysis's packages from .venv after
its own: one interpreter needs both, and no environment here holds both."""

import subprocess
import textwrap

import pytest

from conftest import ROOT

VERIFY_PYTHON = ROOT / ".venv-verify" / "bin" / "python"
ANALYSIS_SITE = next((ROOT / ".venv" / "lib").glob("python3.*/site-packages"), None)

# Both scripts' check: the same state_dict keys, the original's weights load strictly into the
# patched model, and outputs and gradients are allclose in eval and in train mode
ASSERT_SAME = textwrap.dedent("""
    def assert_same(a, b, run):
        import torch
        assert sorted(a.state_dict()) == sorted(b.state_dict())
        b.load_state_dict(a.state_dict(), strict=True)
        for mode in ("eval", "train"):
            getattr(a, mode)(), getattr(b, mode)()
            x, y = run(a), run(b)
            torch.testing.assert_close(y, x, rtol=1e-4, atol=1e-5)
            if mode == "train":
                x.square().sum().backward(), y.square().sum().backward()
                for (key, p), q in zip(a.named_parameters(), b.parameters()):
                    if p.grad is not None:
                        torch.testing.assert_close(q.grad, p.grad, rtol=1e-3, atol=1e-5, msg=key)
""")

SCRIPT = ASSERT_SAME + textwrap.dedent("""
    import sys
    sys.path.insert(0, ROOT)
    sys.path.append(ANALYSIS_SITE)
    import torch
    from adopter.api.patching import patch

    def build(name, kernels):
        module = sys.modules.get(name)
        for key in [m for m in sys.modules if m == name]:
            del sys.modules[key]
        if kernels:
            with patch(name, kernels=kernels, cache_dir=None) as hook:
                module = __import__(name, fromlist=["_"])
            return module, hook.patches[name]
        return __import__(name, fromlist=["_"]), None

    def compare(name, model, config, kernels, inputs):
        original, _ = build(name, None)
        torch.manual_seed(0)
        a = getattr(original, model)(config)
        patched, done = build(name, kernels)
        b = getattr(patched, model)(config)
        assert_same(a, b, lambda model: model(**inputs).last_hidden_state)
        print(name, sorted({m.rule for m in done.applied}))

    import transformers.models.bert.modeling_bert as bert
    import transformers.models.llama.modeling_llama as llama
    ids = torch.randint(0, 64, (2, 12), generator=torch.Generator().manual_seed(1))
    mask = torch.ones(2, 12, dtype=torch.long)
    mask[1, 8:] = 0
    compare("transformers.models.bert.modeling_bert", "BertModel",
            bert.BertConfig(vocab_size=64, hidden_size=32, num_hidden_layers=2, num_attention_heads=4,
                            intermediate_size=48, max_position_embeddings=32, hidden_dropout_prob=0.0,
                            attention_probs_dropout_prob=0.0),
            "default", {"input_ids": ids, "attention_mask": mask})
    compare("transformers.models.llama.modeling_llama", "LlamaModel",
            llama.LlamaConfig(vocab_size=64, hidden_size=32, num_hidden_layers=2, num_attention_heads=4,
                              num_key_value_heads=2, intermediate_size=48, max_position_embeddings=32),
            "torch", {"input_ids": ids})
""")


@pytest.mark.venv
def test_models_imported_through_the_hook_compute_what_the_originals_do():
    if not VERIFY_PYTHON.exists() or ANALYSIS_SITE is None:
        pytest.skip("needs .venv-verify and .venv (make verify-setup setup)")
    script = f"ROOT = {str(ROOT)!r}\nANALYSIS_SITE = {str(ANALYSIS_SITE)!r}\n" + SCRIPT
    done = subprocess.run([str(VERIFY_PYTHON), "-c", script], capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "transformers.models.bert.modeling_bert ['bert_self_attention', 'manual_attention']" in done.stdout
    assert "transformers.models.llama.modeling_llama ['rms_norm', 'rotary', 'swiglu']" in done.stdout


VERIFY_DEV_PYTHON = ROOT / ".venv-verify-dev" / "bin" / "python"
LITGPT = ROOT / "dev_models" / "litgpt-0.5.13"

# litgpt's GPT from the development corpus: its package without the `__init__` that imports the
# whole CLI (evaluation/verify/source_tree.py, as `make verify-dev` imports it), once as it is and
# once with `litgpt.model` rewritten by the hook (torch set: RMSNorm, rotary, SwiGLU, attention)
LITGPT_SCRIPT = ASSERT_SAME + textwrap.dedent("""
    import sys
    sys.path.insert(0, ROOT)
    sys.path.append(ANALYSIS_SITE)
    import torch
    from adopter.api.patching import patch
    from evaluation.verify.dev_corpus import CODEBASES
    from evaluation.verify.source_tree import SourceTree

    def gpt(tree, hook=None):
        with tree:
            if hook is None:
                model = __import__("litgpt.model", fromlist=["_"])
            else:
                with patch("litgpt.model", kernels=hook, cache_dir=None) as done:
                    model = __import__("litgpt.model", fromlist=["_"])
                print("litgpt.model", sorted({m.rule for m in done.patches["litgpt.model"].applied}))
            config = sys.modules["litgpt.config"].Config(
                n_layer=2, n_head=4, n_embd=32, block_size=16, vocab_size=64, padded_vocab_size=64, bias=False,
                norm_class_name="RMSNorm", mlp_class_name="LLaMAMLP", intermediate_size=48, rotary_percentage=1.0,
                parallel_residual=False)
            torch.manual_seed(0)
            return model.GPT(config)

    a = gpt(SourceTree(LITGPT, **CODEBASES["litgpt-0.5.13"]))
    b = gpt(SourceTree(LITGPT, **CODEBASES["litgpt-0.5.13"]), "torch")
    assert type(a).__module__ == type(b).__module__ == "litgpt.model" and type(a) is not type(b)
    idx = torch.randint(0, 64, (2, 16), generator=torch.Generator().manual_seed(1))
    assert_same(a, b, lambda model: model(idx))
    print("litgpt GPT equal in eval and train")
""")


@pytest.mark.venv
def test_litgpt_s_gpt_imported_through_the_hook_computes_what_the_original_does():
    if not VERIFY_DEV_PYTHON.exists() or ANALYSIS_SITE is None or not (LITGPT / "litgpt" / "model.py").exists():
        pytest.skip("needs .venv-verify-dev, .venv and the development corpus (make verify-dev-setup setup zoo-dev)")
    script = f"ROOT = {str(ROOT)!r}\nANALYSIS_SITE = {str(ANALYSIS_SITE)!r}\nLITGPT = {str(LITGPT)!r}\n" + LITGPT_SCRIPT
    done = subprocess.run([str(VERIFY_DEV_PYTHON), "-c", script], capture_output=True, text=True, timeout=600, cwd=ROOT)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "litgpt.model ['" in done.stdout and "swiglu" in done.stdout and "rms_norm" in done.stdout
    assert "litgpt GPT equal in eval and train" in done.stdout
