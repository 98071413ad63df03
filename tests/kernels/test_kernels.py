"""adopter_kernels (needs torch: run by `make test-verify` in .venv-verify)."""

from __future__ import annotations

import copy

import pytest

torch = pytest.importorskip("torch")
from torch import nn  # noqa: E402

from adopter_kernels import (  # noqa: E402
    DropoutAddLayerNorm,
    FusedConvBatchNorm2d,
    FusedLinearBatchNorm1d,
    linear_bias_act,
    load_renamed,
    rms_normalize,
    softmax_last_dim,
)


def _trained_bn(bn):
    bn.running_mean.uniform_(-1, 1)
    bn.running_var.uniform_(0.5, 2)
    bn.weight.data.uniform_(0.5, 2)
    bn.bias.data.uniform_(-1, 1)
    return bn


@pytest.mark.parametrize("training", [False, True])
def test_fused_conv_batchnorm_computes_bn_of_conv_and_owns_no_parameters(training):
    torch.manual_seed(0)
    conv, bn = nn.Conv2d(3, 4, 3, padding=1), _trained_bn(nn.BatchNorm2d(4))
    fused = FusedConvBatchNorm2d(conv, bn)
    assert list(fused.state_dict()) == []
    for m in (conv, bn, fused):
        m.train(training)
    x = torch.randn(2, 3, 8, 8)
    expected = copy.deepcopy(bn)(copy.deepcopy(conv)(x))  # copies: training updates the running stats
    assert torch.allclose(fused(x), expected, rtol=1e-4, atol=1e-5)


def test_folded_weights_are_reused_and_refreshed_when_the_layers_change():
    torch.manual_seed(0)
    conv, bn = nn.Conv2d(3, 4, 3, padding=1).eval(), _trained_bn(nn.BatchNorm2d(4)).eval()
    fused = FusedConvBatchNorm2d(conv, bn).eval()
    x = torch.randn(2, 3, 8, 8)
    with torch.no_grad():
        first = fused(x)
        assert fused._folded.key is not None
        assert torch.allclose(first, bn(conv(x)), rtol=1e-4, atol=1e-5)
        conv.weight.mul_(2)  # an in-place change (as load_state_dict or an optimizer makes)
        assert torch.allclose(fused(x), bn(conv(x)), rtol=1e-4, atol=1e-5)
        assert not torch.allclose(fused(x), first)


def test_torch_set_stand_ins_compute_the_paper_kernels_functions():
    torch.manual_seed(0)
    x, r = torch.randn(2, 5, 8), torch.randn(2, 5, 8)
    assert torch.equal(softmax_last_dim(x), torch.softmax(x, dim=-1))
    module = DropoutAddLayerNorm(8, 0.1, eps=1e-6).eval()
    expected = nn.functional.layer_norm(x + r, (8,), module.layer_norm.weight, module.layer_norm.bias, 1e-6)
    assert torch.allclose(module(x, r), expected)
    assert sorted(module.state_dict()) == ["layer_norm.bias", "layer_norm.weight"]


def test_fused_linear_batchnorm_folds_2d_inputs():
    torch.manual_seed(0)
    linear, bn = nn.Linear(5, 6), _trained_bn(nn.BatchNorm1d(6)).eval()
    x = torch.randn(4, 5)
    assert torch.allclose(FusedLinearBatchNorm1d(linear, bn).eval()(x), bn(linear(x)), rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("bias", [True, False], ids=["bias", "no_bias"])  # (`bias=config.mlp_bias`: either, at run time)
@pytest.mark.parametrize("act", [nn.GELU(), nn.ReLU(), nn.GELU(approximate="tanh"), nn.SiLU()])
def test_linear_bias_act_is_act_of_linear(act, bias):
    torch.manual_seed(0)
    linear = nn.Linear(5, 6, bias=bias)
    x = torch.randn(3, 5)
    assert torch.allclose(linear_bias_act(linear, act, x), act(linear(x)), rtol=1e-5, atol=1e-6)


def test_linear_bias_act_runs_a_linear_s_forward_hooks():
    # graphormer's quant_noise: a forward pre-hook changes the weight the Linear computes with
    torch.manual_seed(0)
    linear = nn.Linear(5, 6)

    def double_weight(module, inputs):
        module.weight.data.mul_(2)
    linear.register_forward_pre_hook(double_weight)
    x = torch.randn(3, 5)
    expected = nn.GELU()(nn.functional.linear(x, linear.weight * 2, linear.bias))
    assert torch.allclose(linear_bias_act(linear, nn.GELU(), x), expected, rtol=1e-5, atol=1e-6)


class _Old(nn.Module):
    def __init__(self):
        super().__init__()
        self.norm = nn.LayerNorm(4)


class _New(nn.Module):
    """The patched layout: the norm moved into a kernel module, old keys mapped by a hook."""

    def __init__(self, save_original: bool = False):
        super().__init__()
        self.fused = nn.Module()
        self.fused.layer_norm = nn.LayerNorm(4)
        load_renamed(self, {"norm.weight": "fused.layer_norm.weight", "norm.bias": "fused.layer_norm.bias"},
                     save_original=save_original)


def test_load_renamed_reads_old_keys_strictly():
    old = _Old()
    old.norm.weight.data.fill_(3.0)
    new = _New()
    new.load_state_dict(old.state_dict(), strict=True)
    assert torch.equal(new.fused.layer_norm.weight, old.norm.weight)
    assert sorted(new.state_dict()) == ["fused.layer_norm.bias", "fused.layer_norm.weight"]


def test_load_renamed_can_save_under_the_original_names():
    outer = nn.Sequential(_New(save_original=True))  # a prefix, as inside a model
    outer[0].fused.layer_norm.weight.data.fill_(2.0)
    saved = outer.state_dict()
    assert sorted(saved) == ["0.norm.bias", "0.norm.weight"]
    old = nn.Sequential(_Old())
    old.load_state_dict(saved, strict=True)
    assert torch.equal(old[0].norm.weight, outer[0].fused.layer_norm.weight)
    again = nn.Sequential(_New(save_original=True))
    again.load_state_dict(saved, strict=True)  # and the patched model reads its own checkpoints
    assert torch.equal(again[0].fused.layer_norm.weight, outer[0].fused.layer_norm.weight)


def test_sdpa_attention_is_the_manual_attention_it_replaces():
    from adopter_kernels import sdpa_attention

    gen = torch.Generator().manual_seed(0)
    q, k, v = (torch.randn(2, 3, 5, 4, generator=gen) for _ in range(3))
    mask = torch.randn(2, 1, 1, 5, generator=gen, dtype=torch.float64)  # another dtype: cast like autocast would
    dropout = nn.Dropout(0.1).eval()
    want = torch.softmax(q @ k.transpose(-1, -2) / 2.0 + mask.float(), dim=-1) @ v
    assert torch.allclose(sdpa_attention(q, k, v, mask, 2.0, dropout), want, atol=1e-6)
    assert torch.allclose(sdpa_attention(q, k, v, None, 2.0, dropout),
                          torch.softmax(q @ k.transpose(-1, -2) / 2.0, dim=-1) @ v, atol=1e-6)


def test_guarded_rewrite_of_the_fixture_computes_what_the_original_does_on_every_path():
    """Every combination of the guard's conditions, original against patched (eval mode)."""
    import itertools
    import types
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    # the patched text is tests/golden's, checked against the rewriter by tests/rewrite/test_guarded.py
    texts = {"original": (root / "adopter" / "rules" / "modern" / "manual_attention.py").read_text(),
             "patched": (root / "tests" / "golden" / "manual_attention.patched.py").read_text()}
    assert "sdpa_attention(" in texts["patched"]
    modules = []
    for name, text in texts.items():
        module = types.ModuleType(name)
        exec(compile(text, f"<{name}>", "exec"), module.__dict__)
        modules.append(module)
    gen = torch.Generator().manual_seed(1)
    q, k, v = (torch.randn(2, 3, 5, 4, generator=gen) for _ in range(3))
    mask, head_mask = torch.randn(2, 1, 1, 5, generator=gen), torch.rand(3, 1, 1, generator=gen)
    for kind, use_mask, use_head_mask, output_attentions in itertools.product(
            ("absolute", "relative_key"), (True, False), (True, False), (True, False)):
        config = types.SimpleNamespace(head_size=4, attention_probs_dropout_prob=0.1, position_embedding_type=kind)
        a, b = (m.BertLike(config).eval() for m in modules)
        args = (q, k, v, mask if use_mask else None, head_mask if use_head_mask else None, output_attentions)
        for x, y in zip(a(*args), b(*args)):
            assert torch.allclose(x, y, atol=1e-6), (kind, use_mask, use_head_mask, output_attentions)
    for name in ("Plain", "ProbabilitiesReturnedWhenAsked", "SoftmaxModules"):
        a, b = (getattr(m, name)().eval() for m in modules)
        for x, y in zip(a(q, k, v, mask), b(q, k, v, mask)):
            assert torch.allclose(x, y, atol=1e-6)


@pytest.mark.parametrize("dim", [-1, 2, 1, 0, (1, 2)])
@pytest.mark.parametrize("upcast", [False, True])
def test_rms_normalize_normalises_over_the_dim_the_original_means_over(dim, upcast):
    x = torch.randn(3, 4, 5, dtype=torch.bfloat16)
    h = x.float()
    expected = h * torch.rsqrt(h.pow(2).mean(dim, keepdim=True) + 1e-6)
    got = rms_normalize(x, 1e-6, upcast=upcast, dim=dim)
    assert got.dtype == (torch.float32 if upcast else torch.bfloat16)
    torch.testing.assert_close(got, expected if upcast else expected.to(torch.bfloat16))


def test_files_patched_before_the_kernels_distribution_still_import_them():
    # `from adopter.kernels import ...` and `adopter.kernels.attention`, as earlier versions wrote them
    import adopter_kernels
    import adopter_kernels.attention
    from adopter.kernels import gated_silu
    from adopter.kernels.attention import BertSelfAttentionSDPA

    assert gated_silu is adopter_kernels.gated_silu
    assert BertSelfAttentionSDPA is adopter_kernels.attention.BertSelfAttentionSDPA
