# Fixture for adopter/rules/modern/manual_attention.adopt.
import math
from functools import partial

import torch
from adopter_kernels import sdpa_attention  # adopter-kernels>=0.1.0
from torch import nn


class BertLike(nn.Module):
    """BERT's shape: probabilities returned when asked for, a head mask, relative scores."""

    def __init__(self, config):
        super().__init__()
        self.head_size = config.head_size
        self.dropout = nn.Dropout(config.attention_probs_dropout_prob)
        self.position_embedding_type = config.position_embedding_type

    def forward(self, query_layer, key_layer, value_layer, attention_mask=None, head_mask=None, output_attentions=False):
        # match: manual_attention
        if (
            attention_mask is None
            or head_mask is not None
            or output_attentions
            or self.position_embedding_type == "relative_key"
        ):
            attention_scores = torch.matmul(query_layer, key_layer.transpose(-1, -2))

            if self.position_embedding_type == "relative_key":
                attention_scores = attention_scores + query_layer.sum()

            attention_scores = attention_scores / math.sqrt(self.head_size)
            if attention_mask is not None:
                attention_scores = attention_scores + attention_mask

            attention_probs = nn.functional.softmax(attention_scores, dim=-1)
            attention_probs = self.dropout(attention_probs)

            if head_mask is not None:
                attention_probs = attention_probs * head_mask

            context_layer = torch.matmul(attention_probs, value_layer)
        else:
            context_layer = sdpa_attention(query_layer, key_layer, value_layer, attention_mask, math.sqrt(self.head_size), self.dropout)
        outputs = (context_layer, attention_probs) if output_attentions else (context_layer,)
        return outputs


class Plain(nn.Module):
    """Nothing else reads the probabilities: the guard only checks the mask."""

    def __init__(self):
        super().__init__()
        self.attn_dropout = nn.Dropout(0.1)

    def forward(self, q, k, v, mask):
        # match: manual_attention
        return sdpa_attention(q, k, v, mask, 8.0, self.attn_dropout)


class SoftmaxModules(Plain):
    """The softmax as a module, its dim a constructor argument: built where it is called (BLIP-2,
    ViLT, LayoutLMv3) or stored on self; one built over another dim is no match."""

    def __init__(self):
        super().__init__()
        self.softmax = nn.Softmax(dim=-1)
        self.over_rows = nn.Softmax(1)

    def forward(self, q, k, v, mask):
        # match: manual_attention
        a = sdpa_attention(q, k, v, mask, 8.0, self.attn_dropout)
        # match: manual_attention
        b = sdpa_attention(q, k, v, mask, 8.0, self.attn_dropout)
        # no-match: manual_attention
        scores3 = torch.matmul(q, k.transpose(-1, -2)) / 8.0 + mask
        c = torch.matmul(self.attn_dropout(self.over_rows(scores3)), v)
        return a + b + c


class ProbabilitiesAlwaysReturned(nn.Module):
    """The probabilities are returned on every path: nowhere to fuse (found by
    manual_attention.steps, which lets them be read, and not rewritten)."""

    def __init__(self):
        super().__init__()
        self.dropout = nn.Dropout(0.1)

    def forward(self, q, k, v, mask):
        # match: manual_attention
        scores = torch.matmul(q, k.transpose(-1, -2))
        scores = scores / 8.0
        scores = scores + mask
        probs = nn.functional.softmax(scores, dim=-1)
        probs = self.dropout(probs)
        return torch.matmul(probs, v), probs


class SoftmaxOverAnotherDim(nn.Module):
    def __init__(self):
        super().__init__()
        self.dropout = nn.Dropout(0.1)

    def forward(self, q, k, v, mask):
        # no-match: manual_attention
        scores = torch.matmul(q, k.transpose(-1, -2))
        scores = scores / 8.0
        scores = scores + mask
        probs = nn.functional.softmax(scores, dim=-2)
        probs = self.dropout(probs)
        return torch.matmul(probs, v)


class MaskReassignedInTheRange(nn.Module):
    """The guard would test `mask` before the range reassigns it: found, not rewritten."""

    def __init__(self):
        super().__init__()
        self.dropout = nn.Dropout(0.1)

    def forward(self, q, k, v, mask, output_attentions=False):
        # match: manual_attention
        scores = torch.matmul(q, k.transpose(-1, -2))
        mask = mask.float()
        scores = scores / 8.0
        scores = scores + mask
        probs = nn.functional.softmax(scores, dim=-1)
        probs = self.dropout(probs)
        out = torch.matmul(probs, v)
        if output_attentions and mask is not None:
            return out, probs
        return (out,)


class ProbabilitiesReturnedWhenAsked(nn.Module):
    """An `if` statement, not a conditional expression, asks for the probabilities."""

    def __init__(self):
        super().__init__()
        self.dropout = nn.Dropout(0.1)

    def forward(self, q, k, v, mask, output_attentions=False):
        # match: manual_attention
        if output_attentions:
            scores = torch.matmul(q, k.transpose(-1, -2))
            scores = scores / 8.0
            scores = scores + mask
            probs = nn.functional.softmax(scores, dim=-1)
            probs = self.dropout(probs)
            out = torch.matmul(probs, v)
        else:
            out = sdpa_attention(q, k, v, mask, 8.0, self.dropout)
        if output_attentions:
            return out, probs
        return (out,)


class NoDropout(nn.Module):
    """manual_attention.steps: any element-wise steps, none among them (found, not rewritten)."""
    def forward(self, q, k, v, mask):
        # match: manual_attention
        scores = torch.matmul(q, k.transpose(-1, -2))
        scores = scores / 8.0
        scores = scores + mask
        probs = nn.functional.softmax(scores, dim=-1)
        return torch.matmul(probs, v)


class ScaledByAProduct(nn.Module):
    """`scores * scale`: manual_attention.steps (found, not rewritten)."""

    def __init__(self):
        super().__init__()
        self.dropout = nn.Dropout(0.1)

    def forward(self, q, k, v, mask):
        # match: manual_attention
        scores = torch.matmul(q, k.transpose(-1, -2))
        scores = scores * 0.125
        scores = scores + mask
        probs = nn.functional.softmax(scores, dim=-1)
        probs = self.dropout(probs)
        return torch.matmul(probs, v)


class ScoresReadAfterAnOptionalAdd(nn.Module):
    """Flava's shape: a second softmax reads the scores, masked or not: found, not rewritten
    (the fused copy would compute neither)."""

    def __init__(self):
        super().__init__()
        self.dropout = nn.Dropout(0.1)

    def forward(self, q, k, v, mask=None):
        # match: manual_attention
        scores = torch.matmul(q, k.transpose(-1, -2))
        scores = scores / 8.0
        if mask is not None:
            scores = scores + mask
        first = nn.functional.softmax(scores, dim=-1)
        probs = nn.functional.softmax(scores, dim=-1)
        probs = self.dropout(probs)
        return torch.matmul(probs, v), first.shape


class Steps(nn.Module):
    """manual_attention.steps: a scale on q, `@`, a bias, a masked_fill, a soft cap, the softmax
    as a method, a dropout, `@` again (found, not rewritten)."""

    def __init__(self):
        super().__init__()
        self.drop = nn.Dropout(0.1)

    def forward(self, q, k, v, bias, mask, cap):
        q = q * 0.125
        # match: manual_attention
        attn = q @ k.transpose(-2, -1)
        attn = attn + bias
        attn = attn.masked_fill(mask, float("-inf"))
        attn = torch.tanh(attn / cap) * cap
        attn = attn.softmax(-1)
        return self.drop(attn) @ v


class StepsBmm(nn.Module):
    def forward(self, q, k, v):
        # match: manual_attention
        scores = torch.bmm(q, k.transpose(1, 2)).float()
        return torch.bmm(torch.softmax(scores, dim=-1).type_as(q), v)


class ScoresSummed(nn.Module):
    """A sum is no element-wise step: the softmax is not of the scores."""
    def forward(self, q, k, v):
        # no-match: manual_attention
        scores = q @ k.transpose(-2, -1)
        return torch.softmax(scores.sum(-1, keepdim=True), dim=-1) @ v


class ScoresReshaped(nn.Module):
    def forward(self, q, k, v):
        # no-match: manual_attention
        scores = q @ k.transpose(-2, -1)
        return torch.softmax(scores.view(-1, 4), dim=-1) @ v


class ProbabilitiesSecond(nn.Module):
    """The values times the probabilities is another product."""
    def forward(self, q, k, v):
        # no-match: manual_attention
        scores = q @ k.transpose(-2, -1)
        return v @ torch.softmax(scores, dim=-1)


class Einsum(nn.Module):
    """manual_attention.einsum: both products as einsum (found, not rewritten)."""
    def forward(self, q, k, v, bias):
        # match: manual_attention
        dot = torch.einsum("b h i d, b h j d -> b h i j", q * 0.125, k)
        probs = nn.functional.softmax(dot + bias, dim=-1)
        return torch.einsum("b h i j, b h j d -> b h i d", probs, v)


class EinsumProbabilitiesSecond(nn.Module):
    def forward(self, q, k, v):
        # no-match: manual_attention
        dot = torch.einsum("b i d, b j d -> b i j", q, k)
        return torch.einsum("b j d, b i j -> b i d", v, dot.softmax(dim=-1))


class EinsumStoredSoftmax(nn.Module):
    """x-transformers' Attend: the softmax a stored partial of a partial, over a dimension a name
    may hold (-1, or -2 for inverted attention): detect-only, where the pattern may hold."""
    def __init__(self, inverted=False, sigmoid=False):
        super().__init__()
        attn_dim = -2 if inverted else -1
        softmax_fn = partial(nn.functional.softmax, dim=attn_dim)
        self.attn_fn = torch.sigmoid if sigmoid else partial(softmax_fn, dtype=torch.float32)
        self.dropout = nn.Dropout(0.1)

    def forward(self, q, k, v, scale):
        equation = "b h j d"
        # match: manual_attention
        sim = torch.einsum(f"b h i d, {equation} -> b h i j", q, k) * scale
        attn = self.attn_fn(sim).type(q.dtype)
        return torch.einsum(f"b h i j, {equation} -> b h i d", self.dropout(attn), v)


class EinsumStoredSoftmaxOverAnotherDim(nn.Module):
    def __init__(self, inverted=False):
        super().__init__()
        attn_dim = -2 if inverted else 1
        self.attn_fn = partial(nn.functional.softmax, dim=attn_dim)
        self.other_fn = partial(self.attn_fn, dim=-1)  # (not what forward calls)

    def forward(self, q, k, v):
        # no-match: manual_attention
        sim = torch.einsum("b h i d, b h j d -> b h i j", q, k)
        return torch.einsum("b h i j, b h j d -> b h i d", self.attn_fn(sim), v)
