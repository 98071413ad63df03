"""The `torch` kernel set's SDPA attention modules against the Hugging Face classes they
replace: same parameters, same outputs on the fused path and on the eager fallbacks.
Runs in the verification venv (`make test-verify`): needs torch and transformers."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

from transformers import BertConfig, GPT2Config, T5Config  # noqa: E402
from transformers.models.bert.modeling_bert import BertSelfAttention  # noqa: E402
from transformers.models.gpt2.modeling_gpt2 import GPT2Attention  # noqa: E402
from transformers.models.t5.modeling_t5 import T5Attention  # noqa: E402

from adopter_kernels.attention import BertSelfAttentionSDPA, GPT2AttentionSDPA, T5AttentionSDPA  # noqa: E402

B, L, H = 2, 7, 32


def _pair(original_cls, sdpa_cls, config, **kwargs):
    torch.manual_seed(0)
    original = original_cls(config, **kwargs).eval()
    fused = sdpa_cls(config, **kwargs).eval()
    fused.load_state_dict(original.state_dict(), strict=True)
    return original, fused


def _close(a, b):
    assert torch.allclose(a, b, rtol=1e-4, atol=1e-5), float((a - b).abs().max())


def _padding_mask(dtype=torch.float32):
    mask = torch.zeros(B, 1, 1, L, dtype=dtype)
    mask[1, ..., -2:] = torch.finfo(dtype).min  # the second sequence is padded by two tokens
    return mask


@pytest.mark.parametrize("output_attentions", [False, True])
def test_bert_sdpa_equals_eager(output_attentions):
    config = BertConfig(hidden_size=H, num_attention_heads=4, attention_probs_dropout_prob=0.0)
    original, fused = _pair(BertSelfAttention, BertSelfAttentionSDPA, config)
    x = torch.randn(B, L, H)
    a = original(x, attention_mask=_padding_mask(), output_attentions=output_attentions)
    b = fused(x, attention_mask=_padding_mask(), output_attentions=output_attentions)
    assert len(a) == len(b)
    for left, right in zip(a, b):
        _close(left, right)


@pytest.mark.parametrize("with_mask", [False, True])
def test_gpt2_sdpa_equals_eager_causal(with_mask):
    config = GPT2Config(n_embd=H, n_head=4, attn_pdrop=0.0, resid_pdrop=0.0)
    original, fused = _pair(GPT2Attention, GPT2AttentionSDPA, config)
    x = torch.randn(B, L, H)
    mask = _padding_mask() if with_mask else None
    a, b = original(x, attention_mask=mask), fused(x, attention_mask=mask)
    _close(a[0], b[0])
    assert a[1] is None and b[1] is None


@pytest.mark.parametrize("relative_bias", [True, False])
def test_t5_sdpa_equals_eager_and_returns_the_position_bias(relative_bias):
    config = T5Config(d_model=H, d_kv=8, num_heads=4, dropout_rate=0.0)
    original, fused = _pair(T5Attention, T5AttentionSDPA, config, has_relative_attention_bias=relative_bias)
    x = torch.randn(B, L, H)
    a, b = original(x, mask=_padding_mask()), fused(x, mask=_padding_mask())
    _close(a[0], b[0])
    _close(a[2], b[2])  # the bias (mask included) is handed to the next layer
    assert b[1] is None


def test_t5_sdpa_cross_attention_and_gradients():
    config = T5Config(d_model=H, d_kv=8, num_heads=4, dropout_rate=0.0, is_decoder=True)
    original, fused = _pair(T5Attention, T5AttentionSDPA, config)
    original.train(), fused.train()
    x, memory = torch.randn(B, L, H), torch.randn(B, L + 3, H)
    a = original(x, key_value_states=memory)[0]
    b = fused(x, key_value_states=memory)[0]
    _close(a, b)
    a.sum().backward(), b.sum().backward()
    for (name, p), q in zip(original.named_parameters(), fused.parameters(), strict=True):
        assert torch.allclose(p.grad, q.grad, rtol=1e-3, atol=1e-5), name


def test_gpt2_sdpa_returns_the_cache_the_eager_code_returns():
    config = GPT2Config(n_embd=H, n_head=4, attn_pdrop=0.0, resid_pdrop=0.0)
    original, fused = _pair(GPT2Attention, GPT2AttentionSDPA, config)
    x = torch.randn(B, L, H)
    a, b = original(x, use_cache=True), fused(x, use_cache=True)
    _close(a[0], b[0])
    for left, right in zip(a[1], b[1], strict=True):  # a missing cache entry fails
        _close(left, right)


def test_t5_decoder_sdpa_returns_the_cache_the_eager_code_returns():
    config = T5Config(d_model=H, d_kv=8, num_heads=4, dropout_rate=0.0, is_decoder=True)
    original, fused = _pair(T5Attention, T5AttentionSDPA, config, has_relative_attention_bias=True)
    x = torch.randn(B, L, H)
    a, b = original(x, use_cache=True), fused(x, use_cache=True)
    _close(a[0], b[0])
    for left, right in zip(a[1], b[1], strict=True):  # a missing cache entry fails
        _close(left, right)
