# Fixture for adopter/rules/modern/rotary.adopt.
import torch
from einops import rearrange
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
    # the rotated half is computed first: the written order of the nodes means nothing
    # match: rotary
    return (rotate_half(q) * sin) + (q * cos)


def apply_rotation_built_first(x, cos, sin):
    # diffusers' MiniMaxMusic3: the rotation built inline before the products
    half_first, half_second = x.chunk(2, dim=-1)
    rotate_half = torch.cat((-half_second, half_first), dim=-1)
    # match: rotary
    return x * cos + rotate_half * sin


def rotate_half_unbound(x):
    # diffusers' stable_audio3: the halves as the two rows of the last dimension split in two
    x = x.unflatten(-1, (2, -1))
    x1, x2 = x.unbind(-2)
    return torch.cat((-x2, x1), dim=-1)


def apply_unbound(q, cos, sin):
    # match: rotary
    return q * cos + rotate_half_unbound(q) * sin


def rotate_half_unbound_last(x):
    x1, x2 = x.unflatten(-1, (2, -1)).unbind(-1)
    return torch.cat((-x2, x1), dim=-1)


def apply_unbound_last(q, cos, sin):
    # unbind(-1) of a (2, n) split takes columns, not halves
    # no-match: rotary
    return q * cos + rotate_half_unbound_last(q) * sin


def rotate_pairs_reshaped(x):
    # diffusers' JoyImage: the pairs by a reshape that keeps every leading dimension
    x_real, x_imag = x.float().reshape(*x.shape[:-1], -1, 2).unbind(-1)
    return torch.stack([-x_imag, x_real], dim=-1).flatten(3)


def apply_pairs_reshaped(q, cos, sin):
    # match: rotary
    return (q.float() * cos + rotate_pairs_reshaped(q) * sin).type_as(q)


def rotate_pairs_other_shape(x, y):
    x_real, x_imag = x.reshape(*y.shape[:-1], -1, 2).unbind(-1)
    return torch.stack([-x_imag, x_real], dim=-1).flatten(3)


def apply_pairs_other_shape(q, k, cos, sin):
    # the leading dimensions are another tensor's: not known to be pairs of q's last dimension
    # no-match: rotary
    return q * cos + rotate_pairs_other_shape(q, k) * sin


def rotate_pairs_unflattened(x):
    x_real, x_imag = x.unflatten(-1, (-1, 2)).unbind(-1)
    return torch.stack([-x_imag, x_real], dim=-1).flatten(-2)


def apply_pairs_unflattened(q, cos, sin):
    # match: rotary
    return q * cos + rotate_pairs_unflattened(q) * sin


def rotate_pairs_of_dim_two(x):
    x_real, x_imag = x.unflatten(2, (-1, 2)).unbind(-1)
    return torch.stack([-x_imag, x_real], dim=-1).flatten(2)


def apply_pairs_of_dim_two(q, cos, sin):
    # diffusers' LTX: dimension 2 is the last only for a 3-d tensor, which is not known here
    # no-match: rotary
    return q * cos + rotate_pairs_of_dim_two(q) * sin


def apply_matrix(q, freqs_cis):
    # Flux's form (rotary.matrix.adopt: found, not rewritten): a 2x2 matrix times each pair of q
    q_ = q.float().reshape(*q.shape[:-1], -1, 1, 2)
    # match: rotary
    q_out = freqs_cis[..., 0] * q_[..., 0] + freqs_cis[..., 1] * q_[..., 1]
    return q_out.reshape(*q.shape).type_as(q)


def apply_two_matrices(q, freqs_cis, other):
    q_ = q.float().reshape(*q.shape[:-1], -1, 1, 2)
    # no-match: rotary
    q_out = freqs_cis[..., 0] * q_[..., 0] + other[..., 1] * q_[..., 1]
    return q_out.reshape(*q.shape).type_as(q)


def apply_matrix_same_column(q, freqs_cis):
    q_ = q.float().reshape(*q.shape[:-1], -1, 1, 2)
    # no-match: rotary
    q_out = freqs_cis[..., 0] * q_[..., 0] + freqs_cis[..., 1] * q_[..., 0]
    return q_out.reshape(*q.shape).type_as(q)


def apply_named_half(x, cos, sin):
    # litgpt: the half size is a name, `x.size(-1) // 2`
    head_size_half = x.size(-1) // 2
    x1 = x[..., :head_size_half]
    x2 = x[..., head_size_half:]
    rotated = torch.cat((-x2, x1), dim=-1)
    # match: rotary
    return (x * cos) + (rotated * sin)


def apply_other_name_half(x, y, cos, sin):
    half = y.size(-1) // 2
    x1 = x[..., :half]
    x2 = x[..., half:]
    rotated = torch.cat((-x2, x1), dim=-1)
    # no-match: rotary
    return (x * cos) + (rotated * sin)


def rotate_pairs_rearranged(x):
    # x-transformers: the pairs by einops, flattened back by einops
    x = rearrange(x, "... (d r) -> ... d r", r=2)
    x1, x2 = x.unbind(dim=-1)
    x = torch.stack((-x2, x1), dim=-1)
    return rearrange(x, "... d r -> ... (d r)")


def apply_pairs_rearranged(t, freqs, scale=1):
    # ... and xPos: both products scaled on their way to the sum
    # match: rotary
    return (t * freqs.cos() * scale) + (rotate_pairs_rearranged(t) * freqs.sin() * scale)


def rotate_halves_rearranged(x):
    x = rearrange(x, "... (r d) -> ... r d", r=2)
    x1, x2 = x.unbind(dim=-1)
    x = torch.stack((-x2, x1), dim=-1)
    return rearrange(x, "... d r -> ... (d r)")


def apply_halves_rearranged(t, cos, sin):
    # the two halves (r=2 is the first axis), unbound along the last: columns, not pairs
    # no-match: rotary
    return t * cos + rotate_halves_rearranged(t) * sin


def rotate_pairs_merged_swapped(x):
    x = rearrange(x, "... (d r) -> ... d r", r=2)
    x1, x2 = x.unbind(dim=-1)
    x = torch.stack((-x2, x1), dim=-1)
    return rearrange(x, "... d r -> ... (r d)")


def apply_pairs_merged_swapped(t, cos, sin):
    # merged back in the other order: the halves' layout, not the pairs'
    # no-match: rotary
    return t * cos + rotate_pairs_merged_swapped(t) * sin


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
               apply_two_tensors(q, k, cos, sin), apply_product_kept(q, cos, sin), apply_rotated_first(q, cos, sin),
               apply_rotation_built_first(q, cos, sin), apply_unbound(q, cos, sin), apply_unbound_last(q, cos, sin),
               apply_pairs_reshaped(q, cos, sin), apply_pairs_other_shape(q, k, cos, sin),
               apply_pairs_unflattened(q, cos, sin), apply_pairs_of_dim_two(q, cos, sin), apply_matrix(q, cos),
               apply_two_matrices(q, cos, sin), apply_matrix_same_column(q, cos), apply_named_half(q, cos, sin),
               apply_other_name_half(q, k, cos, sin), apply_pairs_rearranged(q, cos), apply_halves_rearranged(q, cos, sin),
               apply_pairs_merged_swapped(q, cos, sin)]
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


class StaticRotation(nn.Module):
    """torchtitan's CosSinRoPE: rotate_half a static method called through the class's name,
    in a method the subclass overrides and the base's forward calls."""
    def forward(self, q, cos, sin):
        return self.rotate(q, cos, sin)

    def rotate(self, q, cos, sin):
        return q


class StaticRotationHalves(StaticRotation):
    def __init__(self, hidden):
        super().__init__()
        self.proj = nn.Linear(hidden, hidden)

    @staticmethod
    def rotate_halves(x):
        x1 = x[..., : x.shape[-1] // 2]
        x2 = x[..., x.shape[-1] // 2 :]
        return torch.cat((-x2, x1), dim=-1)

    def rotate(self, q, cos, sin):
        q = self.proj(q)
        # match: rotary
        return (q * cos) + (StaticRotationHalves.rotate_halves(q) * sin)


class ComplexRotation(nn.Module):
    """rotary.complex: the pairs as complex numbers times the frequencies (found, not rewritten)."""
    def forward(self, q, freqs_cis):
        q_ = torch.view_as_complex(q.float().reshape(*q.shape[:-1], -1, 2))
        # match: rotary
        return torch.view_as_real(q_ * freqs_cis).flatten(3).type_as(q)


class ComplexKeptComplex(nn.Module):
    def forward(self, q, freqs_cis):
        q_ = torch.view_as_complex(q.float().reshape(*q.shape[:-1], -1, 2))
        # no-match: rotary
        return q_ * freqs_cis
