# Fixture for adopter/rules/modern/rms_norm.adopt.
import torch
import torch.nn.functional as F
from torch import nn


class LlamaRMSNorm(nn.Module):
    def __init__(self, hidden_size, eps=1e-6):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(hidden_size))
        self.variance_epsilon = eps

    def forward(self, hidden_states):
        input_dtype = hidden_states.dtype
        hidden_states = hidden_states.to(torch.float32)
        # match: rms_norm
        variance = hidden_states.pow(2).mean(-1, keepdim=True)
        hidden_states = hidden_states * torch.rsqrt(variance + self.variance_epsilon)
        return self.weight * hidden_states.to(input_dtype)


class NoCast(LlamaRMSNorm):
    def forward(self, x):
        # match: rms_norm
        variance = x.pow(2).mean(-1, keepdim=True)
        return self.weight * (x * torch.rsqrt(variance + self.variance_epsilon))


class OneExpression(LlamaRMSNorm):
    def forward(self, x):
        # match: rms_norm
        return self.weight * (x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-5))


class UnderAGuard(LlamaRMSNorm):
    def forward(self, x, normalise: bool):
        if normalise:
            # match: rms_norm
            variance = x.pow(2).mean(-1, keepdim=True)
            x = x * torch.rsqrt(variance + self.variance_epsilon)
        return self.weight * x


class Reassigned(LlamaRMSNorm):
    def forward(self, x, y):
        # no-match: rms_norm
        variance = x.pow(2).mean(-1, keepdim=True)
        x = y
        return self.weight * (x * torch.rsqrt(variance + self.variance_epsilon))


class LayerNormLike(LlamaRMSNorm):
    def forward(self, x):
        # no-match: rms_norm
        variance = (x - x.mean(-1, keepdim=True)).pow(2).mean(-1, keepdim=True)
        return x * torch.rsqrt(variance + self.variance_epsilon)


class NoKeepdim(LlamaRMSNorm):
    def forward(self, x):
        # no-match: rms_norm
        variance = x.pow(2).mean(-1)
        return x * torch.rsqrt(variance + self.variance_epsilon)


class SqrtDivide(LlamaRMSNorm):
    def forward(self, x):
        # no-match: rms_norm
        variance = x.pow(2).mean(-1, keepdim=True)
        return x / torch.sqrt(variance + self.variance_epsilon)


class FunctionSpellings(LlamaRMSNorm):
    def forward(self, x):
        # torch.pow and torch.mean are the tensor methods' operations (adopter/catalogue/ops/)
        # match: rms_norm
        variance = torch.mean(torch.pow(x, 2), dim=-1, keepdim=True)
        return x * torch.rsqrt(variance + self.variance_epsilon)


class SquareSpellings(LlamaRMSNorm):
    """The square in each of its spellings: `x * x`, `x ** 2`, `x.square()`, `torch.square(x)`
    (adopter/catalogue/ops/: implied exponent; adopter/datalog/ops/idioms.lp: a value times itself)."""
    def forward(self, x):
        # match: rms_norm
        a = x * torch.rsqrt((x * x).mean(-1, keepdim=True) + self.variance_epsilon)
        # match: rms_norm
        b = x * torch.rsqrt(torch.mean(x ** 2, dim=-1, keepdim=True) + self.variance_epsilon)
        # match: rms_norm
        c = x * torch.rsqrt(x.square().mean(-1, keepdim=True) + self.variance_epsilon)
        # match: rms_norm
        d = x * torch.rsqrt(torch.square(x).mean(-1, keepdim=True) + self.variance_epsilon)
        return a + b + c + d


class DimFromTheConstructor(nn.Module):
    """litgpt's RMSNorm: the dim a constructor argument, the square `x * x` of an upcast input."""
    def __init__(self, size, dim=-1, eps=1e-6):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(size))
        self.eps = eps
        self.dim = dim

    def forward(self, x):
        dtype = x.dtype
        x = x.float()
        # match: rms_norm
        norm_x = torch.mean(x * x, dim=self.dim, keepdim=True)
        x_normed = x * torch.rsqrt(norm_x + self.eps)
        return (x_normed * self.weight.float()).to(dtype=dtype)


class ProductOfTwo(LlamaRMSNorm):
    def forward(self, x, y):
        # no-match: rms_norm
        a = x * torch.rsqrt((x * y).mean(-1, keepdim=True) + self.variance_epsilon)
        # no-match: rms_norm
        b = x * torch.rsqrt((x ** 3).mean(-1, keepdim=True) + self.variance_epsilon)
        return a + b


class Normalized(nn.Module):
    """x-transformers' RMSNorm: an L2 normalisation times sqrt(dim) and a gain (rms_norm.normalize.adopt)."""
    def __init__(self, dim):
        super().__init__()
        self.scale = dim ** 0.5
        self.g = nn.Parameter(torch.ones(dim))

    def forward(self, x):
        # match: rms_norm
        return F.normalize(x, dim=-1) * self.scale * self.g


class NormalizedFirst(Normalized):
    def forward(self, x):
        # match: rms_norm
        normed = F.normalize(x, dim=-1)
        return normed * self.scale


class NormalizedChannels(Normalized):
    def forward(self, x):
        # no-match: rms_norm
        return F.normalize(x, dim=1) * self.scale


class NormalizedAlone(Normalized):
    def forward(self, x):
        # no-match: rms_norm
        return F.normalize(x, dim=-1)


class NormalizedWithP(Normalized):
    def forward(self, x):
        # the L2 norm written out, also as a float (F.normalize's default p is 2.0)
        # match: rms_norm
        a = F.normalize(x, p=2, dim=-1) * self.scale
        # match: rms_norm
        b = F.normalize(x, 2.0, -1) * self.scale
        return a + b


class NormalizedL1(Normalized):
    def forward(self, x):
        # x-transformers' sinkhorn: an L1 normalisation is no RMSNorm
        # no-match: rms_norm
        a = F.normalize(x, p=1, dim=-1) * self.scale
        # no-match: rms_norm
        b = F.normalize(x, 1, -1) * self.scale
        return a + b
