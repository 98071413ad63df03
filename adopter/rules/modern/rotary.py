# Fixture for adopter/rules/modern/rotary.adopt.
import torch
from torch import nn


def rotate_half(x):
    """Rotates half the hidden dims of the input."""
    x1 = x[..., : x.shape[-1] // 2]
    x2 = x[..., x.shape[-1] // 2 :]
    return torch.cat((-x2, x1), dim=-1)


def apply_rotary_pos_emb(q, k, cos, sin, unsqueeze_dim=1):
    # transformers 5.x (Llama and most models): a module-level function the attention calls
    cos = cos.unsqueeze(unsqueeze_dim)
    sin = sin.unsqueeze(unsqueeze_dim)
    # match: rotary
    q_embed = (q * cos) + (rotate_half(q) * sin)
    # match: rotary
    k_embed = (k * cos) + (rotate_half(k) * sin)
    return q_embed, k_embed


def rotate_half_chunked(x):
    x1, x2 = x.chunk(2, dim=-1)
    return torch.cat((-x2, x1), dim=-1)


def apply_chunked(q, cos, sin):
    # match: rotary
    return (cos * q) + (sin * rotate_half_chunked(q))


def rotate_the_other_way(x):
    x1 = x[..., : x.shape[-1] // 2]
    x2 = x[..., x.shape[-1] // 2 :]
    return torch.cat((x2, -x1), dim=-1)


def apply_other_way(q, cos, sin):
    # the second half comes first unnegated: another rotation
    # no-match: rotary
    return (q * cos) + (rotate_the_other_way(q) * sin)


def rotate_every_two(x):
    x1 = x[..., ::2]
    x2 = x[..., 1::2]
    return torch.cat((-x2, x1), dim=-1)


def apply_every_two(q, cos, sin):
    # even and odd entries, not halves (GPT-J interleaves them with stack, this concatenates)
    # no-match: rotary
    return (q * cos) + (rotate_every_two(q) * sin)


def rotate_interleaved(x):
    x1 = x[..., ::2]
    x2 = x[..., 1::2]
    return torch.stack((-x2, x1), dim=-1).flatten(-2)


def apply_interleaved(q, cos, sin):
    # the interleaved form (rotary.interleaved.adopt: found, not rewritten)
    # match: rotary
    return (q * cos) + (rotate_interleaved(q) * sin)


def rotate_first_dim(x):
    x1 = x[: x.shape[0] // 2]
    x2 = x[x.shape[0] // 2 :]
    return torch.cat((-x2, x1), dim=-1)


def apply_first_dim(q, cos, sin):
    # no-match: rotary
    return (q * cos) + (rotate_first_dim(q) * sin)


def rotate_cat_first_dim(x):
    x1 = x[..., : x.shape[-1] // 2]
    x2 = x[..., x.shape[-1] // 2 :]
    return torch.cat((-x2, x1), dim=0)


def apply_cat_first_dim(q, cos, sin):
    # no-match: rotary
    return (q * cos) + (rotate_cat_first_dim(q) * sin)


def apply_two_tensors(q, k, cos, sin):
    # no-match: rotary
    return (q * cos) + (rotate_half(k) * sin)


def apply_product_kept(q, cos, sin):
    # no-match: rotary
    scaled = q * cos
    return scaled + (rotate_half(q) * sin), scaled


def apply_rotated_first(q, cos, sin):
    # the rotated half is computed first: the pattern's order is q * cos, then rotate_half (known limit)
    # todo-match: rotary
    return (rotate_half(q) * sin) + (q * cos)


class Attention(nn.Module):
    def __init__(self, hidden, heads):
        super().__init__()
        self.heads = heads
        self.q_proj = nn.Linear(hidden, hidden)
        self.k_proj = nn.Linear(hidden, hidden)

    def forward(self, hidden_states, position_embeddings):
        shape = (*hidden_states.shape[:-1], self.heads, -1)
        q = self.q_proj(hidden_states).view(shape).transpose(1, 2)
        k = self.k_proj(hidden_states).view(shape).transpose(1, 2)
        cos, sin = position_embeddings
        q_embed, k_embed = apply_rotary_pos_emb(q, k, cos, sin)
        out = [apply_chunked(q, cos, sin), apply_other_way(q, cos, sin), apply_every_two(q, cos, sin),
               apply_interleaved(q, cos, sin), apply_first_dim(q, cos, sin), apply_cat_first_dim(q, cos, sin),
               apply_two_tensors(q, k, cos, sin), apply_product_kept(q, cos, sin), apply_rotated_first(q, cos, sin)]
        return q_embed, k_embed, out


class InMethod(nn.Module):
    # written in the module itself: rewritten with the default scope too
    def __init__(self, hidden):
        super().__init__()
        self.proj = nn.Linear(hidden, hidden)

    def forward(self, x, cos, sin):
        q = self.proj(x)
        # match: rotary
        q = q * cos + rotate_half(q) * sin
        return q


class FloatTwice(InMethod):
    def forward(self, x, cos, sin):
        q = self.proj(x)
        # two `.float()` calls of one value are one value (equal tensors)
        # match: rotary
        return q.float() * cos + rotate_half(q.float()) * sin


class InterleavedInMethod(InMethod):
    # RoFormer: the rotation written inline, pairs by strided subscripts, back to q's shape by reshape_as
    def forward(self, x, cos, sin):
        q = self.proj(x)
        rotated = torch.stack([-q[..., 1::2], q[..., ::2]], dim=-1).reshape_as(q)
        # match: rotary
        return q * cos + rotated * sin


class InterleavedOtherTensor(InMethod):
    def forward(self, x, y, cos, sin):
        q, k = self.proj(x), self.proj(y)
        rotated = torch.stack([-k[..., 1::2], q[..., ::2]], dim=-1).reshape_as(q)
        # no-match: rotary
        return q * cos + rotated * sin


class InterleavedOtherStride(InMethod):
    def forward(self, x, cos, sin):
        q = self.proj(x)
        rotated = torch.stack([-q[..., 1::3], q[..., ::3]], dim=-1).reshape_as(q)
        # no-match: rotary
        return q * cos + rotated * sin
