"""Reference for epoi's attention modules (`epoi.ops.xformers_attn`): drop-in subclasses of
the Hugging Face classes with the same constructor, call signature and parameters.

BERT's and GPT-2's compute attention with `scaled_dot_product_attention` (the
memory-efficient kernel's math), as the `torch` kernel set's modules do
(kernels/adopter_kernels/attention.py), when nothing asks for the probabilities, the head mask,
a cache or cross-attention; otherwise, and always for T5 (whose relative position bias
the reference does not re-implement), they run the eager attention.
"""

from __future__ import annotations

from transformers.models.t5.modeling_t5 import T5Attention as _T5Attention

from adopter_kernels.attention import BertSelfAttentionSDPA, GPT2AttentionSDPA


class BertSelfAttentionWithXF(BertSelfAttentionSDPA):
    def __init__(self, config, position_embedding_type=None, attn_op_name="cutlass"):
        super().__init__(config, position_embedding_type=position_embedding_type)


class GPT2AttentionWithXF(GPT2AttentionSDPA):
    def __init__(self, config, is_cross_attention=False, layer_idx=None, attn_op_name="cutlass"):
        super().__init__(config, is_cross_attention=is_cross_attention, layer_idx=layer_idx)


class T5Attention(_T5Attention):
    def __init__(self, config, has_relative_attention_bias=False, attn_op_name="cutlass"):
        super().__init__(config, has_relative_attention_bias=has_relative_attention_bias)
