"""Attention modules of the `torch` kernel set: subclasses of the Hugging Face classes
(same constructor, call signature and parameters) whose forward runs PyTorch's fused
`F.scaled_dot_product_attention` (flash / memory-efficient kernels on CUDA, a fused CPU
kernel otherwise) when nothing needs the eager path: callers asking for attention
probabilities, a head mask, an existing key/value cache or cross-attention get the original
code (a cache is returned when asked for).

Imported only by patched models (which import transformers anyway).
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from transformers.models.bert.modeling_bert import BertSelfAttention
from transformers.models.gpt2.modeling_gpt2 import GPT2Attention
from transformers.models.t5.modeling_t5 import T5Attention


def _heads(x: torch.Tensor, n: int) -> torch.Tensor:
    return x.view(*x.shape[:-1], n, x.shape[-1] // n).permute(0, 2, 1, 3)


def _merge(x: torch.Tensor, like: torch.Tensor, width: int) -> torch.Tensor:
    return x.permute(0, 2, 1, 3).reshape(*like.shape[:-1], width)


class BertSelfAttentionSDPA(BertSelfAttention):
    def __init__(self, config, position_embedding_type=None, **_ignored):
        super().__init__(config, position_embedding_type=position_embedding_type)

    def forward(self, hidden_states, attention_mask=None, head_mask=None, encoder_hidden_states=None,
                encoder_attention_mask=None, past_key_value=None, output_attentions=False):
        plain = (head_mask is None and encoder_hidden_states is None and past_key_value is None
                 and not output_attentions and not self.is_decoder and self.position_embedding_type == "absolute")
        if not plain:
            return super().forward(hidden_states, attention_mask, head_mask, encoder_hidden_states,
                                   encoder_attention_mask, past_key_value, output_attentions)
        q, k, v = (_heads(f(hidden_states), self.num_attention_heads) for f in (self.query, self.key, self.value))
        p = self.dropout.p if self.training else 0.0
        out = F.scaled_dot_product_attention(q, k, v, attn_mask=attention_mask, dropout_p=p)
        return (_merge(out, hidden_states, self.all_head_size),)


class GPT2AttentionSDPA(GPT2Attention):
    def __init__(self, config, is_cross_attention=False, layer_idx=None, **_ignored):
        super().__init__(config, is_cross_attention=is_cross_attention, layer_idx=layer_idx)

    def forward(self, hidden_states, layer_past=None, attention_mask=None, head_mask=None, encoder_hidden_states=None,
                encoder_attention_mask=None, use_cache=False, output_attentions=False):
        plain = (layer_past is None and head_mask is None and encoder_hidden_states is None
                 and not output_attentions and not self.is_cross_attention and self.scale_attn_weights
                 and not self.scale_attn_by_inverse_layer_idx and not self.reorder_and_upcast_attn)
        if not plain:
            return super().forward(hidden_states, layer_past, attention_mask, head_mask, encoder_hidden_states,
                                   encoder_attention_mask, use_cache, output_attentions)
        q, k, v = self.c_attn(hidden_states).split(self.split_size, dim=2)
        q, k, v = (_heads(t, self.num_heads) for t in (q, k, v))
        p = self.attn_dropout.p if self.training else 0.0
        if attention_mask is None:  # the causal kernel, no mask tensor at all
            out = F.scaled_dot_product_attention(q, k, v, dropout_p=p, is_causal=True)
        else:
            length = q.shape[-2]
            causal = torch.ones(length, length, dtype=torch.bool, device=q.device).tril()
            mask = torch.zeros(length, length, dtype=q.dtype, device=q.device).masked_fill(~causal, torch.finfo(q.dtype).min)
            out = F.scaled_dot_product_attention(q, k, v, attn_mask=mask + attention_mask, dropout_p=p)
        out = self.resid_dropout(self.c_proj(_merge(out, hidden_states, self.embed_dim)))
        return (out, (k, v) if use_cache else None)  # the cache a later step would extend


class T5AttentionSDPA(T5Attention):
    """T5's attention (self or cross, with or without the relative position bias) on SDPA:
    T5 does not scale the scores (`scale=1.0`) and adds the position bias, mask included,
    to them, which is SDPA's additive `attn_mask`. A key/value cache, a head mask, pruned
    heads or a request for the probabilities run the original code; a new cache is returned."""

    def __init__(self, config, has_relative_attention_bias=False, **_ignored):
        super().__init__(config, has_relative_attention_bias=has_relative_attention_bias)

    def forward(self, hidden_states, mask=None, key_value_states=None, position_bias=None, past_key_value=None,
                layer_head_mask=None, query_length=None, use_cache=False, output_attentions=False):
        plain = (past_key_value is None and layer_head_mask is None and not output_attentions
                 and not self.pruned_heads)
        if not plain:
            return super().forward(hidden_states, mask, key_value_states, position_bias, past_key_value,
                                   layer_head_mask, query_length, use_cache, output_attentions)
        source = hidden_states if key_value_states is None else key_value_states
        q = _heads(self.q(hidden_states), self.n_heads)
        k, v = (_heads(f(source), self.n_heads) for f in (self.k, self.v))
        if position_bias is None:
            length, key_length = hidden_states.shape[1], source.shape[1]
            if self.has_relative_attention_bias:
                position_bias = self.compute_bias(length, key_length, device=q.device)
            else:
                position_bias = torch.zeros((1, self.n_heads, length, key_length), device=q.device, dtype=q.dtype)
                if self.gradient_checkpointing and self.training:
                    position_bias.requires_grad = True
            if mask is not None:
                position_bias = position_bias + mask
        p = self.dropout if self.training else 0.0
        bias = position_bias.to(q.dtype)  # SDPA takes a mask of the query's dtype (bf16 under autocast)
        out = F.scaled_dot_product_attention(q, k, v, attn_mask=bias, dropout_p=p, scale=1.0)
        present = (k, v) if self.is_decoder and use_cache else None  # the cache a later step would extend
        return (self.o(_merge(out, hidden_states, self.inner_dim)), present, position_bias)
