# Fixture for adopter/rules/modern/tanh_gelu.adopt.
import torch
from torch import nn


def gelu_tanh(x):
    # match: tanh_gelu
    return x * 0.5 * (1.0 + torch.tanh(0.79788456 * x * (1 + 0.044715 * x * x)))


def gelu_tanh_unused(x):
    # no-match: tanh_gelu
    return x * 0.5 * (1.0 + torch.tanh(0.79788456 * x * (1 + 0.044715 * x * x)))


class InForward(nn.Module):
    def forward(self, x):
        # match: tanh_gelu
        return x * 0.5 * (1.0 + torch.tanh(0.79788456 * x * (1 + 0.044715 * x * x)))


class Assigned(nn.Module):
    def forward(self, hidden_states):
        # match: tanh_gelu
        hidden_states = hidden_states * 0.5 * (1.0 + torch.tanh(0.79788456 * hidden_states * (1 + 0.044715 * hidden_states * hidden_states)))
        return hidden_states


class ThroughAFunction(nn.Module):
    """Bloom's shape: the forward calls a module-level function of the file."""

    def forward(self, x):
        if self.training:
            return x
        return gelu_tanh(x)


class UnderAGuard(nn.Module):
    def forward(self, x, approximate: bool):
        if approximate:
            # match: tanh_gelu
            x = x * 0.5 * (1.0 + torch.tanh(0.79788456 * x * (1 + 0.044715 * x * x)))
        return x


def gelu_tanh_for_init(x):
    # no-match: tanh_gelu
    return x * 0.5 * (1.0 + torch.tanh(0.79788456 * x * (1 + 0.044715 * x * x)))


class CalledOutsideForward(nn.Module):
    """Only forward methods (and what they call) are matched."""

    def __init__(self):
        super().__init__()
        self.scale = gelu_tanh_for_init(torch.ones(1))


class TwoTensors(nn.Module):
    def forward(self, x, y):
        # no-match: tanh_gelu
        return x * 0.5 * (1.0 + torch.tanh(0.79788456 * y * (1 + 0.044715 * x * x)))


class PartialRead(nn.Module):
    def forward(self, x):
        # no-match: tanh_gelu
        inner = 0.79788456 * x * (1 + 0.044715 * x * x)
        y = x * 0.5 * (1.0 + torch.tanh(inner))
        return y + inner


class OtherConstant(nn.Module):
    def forward(self, x):
        # no-match: tanh_gelu
        return x * 0.5 * (1.0 + torch.tanh(0.7 * x * (1 + 0.044715 * x * x)))
