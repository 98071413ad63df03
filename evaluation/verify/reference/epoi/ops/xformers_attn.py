"""Reference for epoi's attention modules (`epoi.ops.xformers_attn`): drop-in subclasses of
the Hugging Face classes with the same constructor, call signature and parameters.

BERT's and GPT-2's compute attention with `scaled_dot_product_attention` (the
memory-efficient kernel's math) when nothing asks for the probabilities, the head mask,
a cache or cross-attention; otherwise, and always for T5 (whose relative position bias
the reference does not re-implement), they run the eager attention.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from transformers.models.bert.modeling_bert import BertSelfAttention
from transformers.models.gpt2.modeling_gpt2 import GPT2Attention
from transformers.models.t5.modeling_t5 import T5Attention as _T5Attention


def _heads(x: torch.Tensor, n: int) -> torch.Tensor:
    return x.view(*x.shape[:-1], n, x.shape[-1] // n).permute(0, 2, 1, 3)


class BertSelfAttentionWithXF(BertSelfAttention):
    def __init__(self, config, position_embedding_type=None, attn_op_name="cutlass"):
        super().__init__(config, position_embedding_type=position_embedding_type)

    def forward(self, hidden_states, attention_mask=None, head_mask=None, encoder_hidden_states=None,
                encoder_attention_mask=None, past_key_value=None, output_attentions=False):
        plain = (head_mask is None and encoder_hidden_states is None and past_key_value is None
                 and not output_attentions and not self.is_decoder and self.position_embedding_type == "absolute")
        if not plain:
            return super().forward(hidden_states, attention_mask, head_mask, encoder_hidden_states,
                                   encoder_attention_mask, past_key_value, output_attentions)
        n = self.num_attention_heads
        q, k, v = (_heads(f(hidden_states), n) for f in (self.query, self.key, self.value))
        p = self.dropout.p if self.training else 0.0
        out = F.scaled_dot_product_attention(q, k, v, attn_mask=attention_mask, dropout_p=p)
        out = out.permute(0, 2, 1, 3).reshape(*hidden_states.shape[:-1], self.all_head_size)
        return (out,)


class GPT2AttentionWithXF(GPT2Attention):
    def __init__(self, config, is_cross_attention=False, layer_idx=None, attn_op_name="cutlass"):
        super().__init__(config, is_cross_attention=is_cross_attention, layer_idx=layer_idx)

    def forward(self, hidden_states, layer_past=None, attention_mask=None, head_mask=None, encoder_hidden_states=None,
                encoder_attention_mask=None, use_cache=False, output_attentions=False):
        plain = (layer_past is None and head_mask is None and encoder_hidden_states is None and not use_cache
                 and not output_attentions and not self.is_cross_attention and self.scale_attn_weights
                 and not self.scale_attn_by_inverse_layer_idx and not self.reorder_and_upcast_attn)
        if not plain:
            return super().forward(hidden_states, layer_past, attention_mask, head_mask, encoder_hidden_states,
                                   encoder_attention_mask, use_cache, output_attentions)
        q, k, v = self.c_attn(hidden_states).split(self.split_size, dim=2)
        q, k, v = (_heads(t, self.num_heads) for t in (q, k, v))
        length = q.shape[-2]
        causal = torch.ones(length, length, dtype=torch.bool, device=q.device).tril()
        mask = torch.zeros(length, length, dtype=q.dtype, device=q.device).masked_fill(~causal, torch.finfo(q.dtype).min)
        if attention_mask is not None:
            mask = mask + attention_mask
        p = self.attn_dropout.p if self.training else 0.0
        out = F.scaled_dot_product_attention(q, k, v, attn_mask=mask, dropout_p=p)
        out = out.permute(0, 2, 1, 3).reshape(*hidden_states.shape[:-1], self.embed_dim)
        out = self.resid_dropout(self.c_proj(out))
        return (out, None)


class T5Attention(_T5Attention):
    def __init__(self, config, has_relative_attention_bias=False, attn_op_name="cutlass"):
        super().__init__(config, has_relative_attention_bias=has_relative_attention_bias)
