# Fixture for adopter/rules/modern/rms_norm_upcast.adopt.
import torch
from torch import nn


class T5LayerNorm(nn.Module):
    def __init__(self, hidden_size, eps=1e-6):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(hidden_size))
        self.variance_epsilon = eps

    def forward(self, hidden_states):
        # match: rms_norm_upcast
        variance = hidden_states.to(torch.float32).pow(2).mean(-1, keepdim=True)
        hidden_states = hidden_states * torch.rsqrt(variance + self.variance_epsilon)
        if self.weight.dtype in [torch.float16, torch.bfloat16]:
            hidden_states = hidden_states.to(self.weight.dtype)
        return self.weight * hidden_states


class OneExpression(T5LayerNorm):
    def forward(self, x):
        # match: rms_norm_upcast
        return self.weight * (x * torch.rsqrt(x.to(torch.float32).pow(2).mean(-1, keepdim=True) + 1e-6))


class SplitStatements(T5LayerNorm):
    def forward(self, x):
        # match: rms_norm_upcast
        squared = x.to(torch.float32).pow(2)
        variance = squared.mean(-1, keepdim=True)
        scale = torch.rsqrt(variance + self.variance_epsilon)
        return self.weight * (x * scale)


class ThroughAlias(T5LayerNorm):
    def forward(self, x):
        eps = self.variance_epsilon
        # match: rms_norm_upcast
        variance = x.to(torch.float32).pow(2).mean(-1, keepdim=True)
        y = x * torch.rsqrt(variance + eps)
        return self.weight * y


class HalfCast(T5LayerNorm):
    def forward(self, x):
        # no-match: rms_norm_upcast
        variance = x.to(torch.float16).pow(2).mean(-1, keepdim=True)
        return self.weight * (x * torch.rsqrt(variance + self.variance_epsilon))


class OtherDimension(T5LayerNorm):
    def forward(self, x):
        # the kernel normalises over the dim the mean is over
        # match: rms_norm_upcast
        variance = x.to(torch.float32).pow(2).mean(1, keepdim=True)
        return self.weight * (x * torch.rsqrt(variance + self.variance_epsilon))


class VarianceReadAgain(T5LayerNorm):
    def forward(self, x):
        # no-match: rms_norm_upcast
        variance = x.to(torch.float32).pow(2).mean(-1, keepdim=True)
        y = x * torch.rsqrt(variance + self.variance_epsilon)
        return self.weight * y, variance


class OtherTensorScaled(T5LayerNorm):
    def forward(self, x, other):
        # no-match: rms_norm_upcast
        variance = x.to(torch.float32).pow(2).mean(-1, keepdim=True)
        return self.weight * (other * torch.rsqrt(variance + self.variance_epsilon))


class CubeNotSquare(T5LayerNorm):
    def forward(self, x):
        # no-match: rms_norm_upcast
        variance = x.to(torch.float32).pow(3).mean(-1, keepdim=True)
        return self.weight * (x * torch.rsqrt(variance + self.variance_epsilon))


class MeanSpelledAsFunction(T5LayerNorm):
    def forward(self, x):
        # match: rms_norm_upcast
        variance = torch.mean(x.to(torch.float32) ** 2, -1, keepdim=True)
        return self.weight * (x * torch.rsqrt(variance + self.variance_epsilon))
