# Fixture for adopter/rules/modern/groupnorm_silu.adopt.
import torch
import torch.nn.functional as F
from torch import nn

from diffusers.models.activations import get_activation


class ResnetBlock(nn.Module):
    def __init__(self, channels, groups=4):
        super().__init__()
        self.norm1 = nn.GroupNorm(groups, channels)
        self.conv1 = nn.Conv2d(channels, channels, 3, padding=1)
        self.norm2 = nn.GroupNorm(num_groups=groups, num_channels=channels, eps=1e-6)
        self.conv2 = nn.Conv2d(channels, channels, 3, padding=1)
        self.act = nn.SiLU()

    def forward(self, x):
        # match: groupnorm_silu
        h = F.silu(self.norm1(x))
        h = self.conv1(h)
        # match: groupnorm_silu
        h = self.norm2(h)
        h = self.act(h)
        return x + self.conv2(h)


class Inplace(ResnetBlock):
    def forward(self, x):
        # match: groupnorm_silu
        h = torch.nn.functional.silu(self.norm1(x), inplace=True)
        return self.conv1(h)


class UnderAGuard(ResnetBlock):
    def forward(self, x, use_norm: bool = True):
        if use_norm:
            # match: groupnorm_silu
            x = F.silu(self.norm1(x))
        return self.conv1(x)


class NormReadElsewhere(ResnetBlock):
    def forward(self, x):
        # no-match: groupnorm_silu
        h = self.norm1(x)
        return self.conv1(F.silu(h)) + h


class OtherActivation(ResnetBlock):
    def forward(self, x):
        # no-match: groupnorm_silu
        return self.conv1(F.gelu(self.norm1(x)))


class LayerNormFirst(nn.Module):
    def __init__(self):
        super().__init__()
        self.norm = nn.LayerNorm(8)

    def forward(self, x):
        # no-match: groupnorm_silu
        return F.silu(self.norm(x))


class SomethingBetween(ResnetBlock):
    def forward(self, x):
        # no-match: groupnorm_silu
        return F.silu(self.norm1(x) * 2.0)


class ReLUModule(ResnetBlock):
    def __init__(self, channels):
        super().__init__(channels)
        self.act = nn.ReLU()

    def forward(self, x):
        # no-match: groupnorm_silu
        return self.act(self.norm2(x))


class ChosenActivation(nn.Module):
    def __init__(self, channels, make_act):
        super().__init__()
        self.norm = nn.GroupNorm(4, channels)
        self.nonlinearity = make_act("silu")

    def forward(self, x):
        # an activation a function of another file returns (diffusers' get_activation): its type is not known (known limit)
        # todo-match: groupnorm_silu
        return self.nonlinearity(self.norm(x))


# --- an activation diffusers' get_activation builds (groupnorm_silu.get_activation.adopt) ---

class UNetHead(nn.Module):
    # diffusers' UNet2DConditionModel: the head built under a guard, the name a parameter's default
    def __init__(self, act_fn: str = "silu", norm_num_groups=32):
        super().__init__()
        if norm_num_groups is not None:
            self.conv_norm_out = nn.GroupNorm(norm_num_groups, 64)
            self.conv_act = get_activation(act_fn)
        else:
            self.conv_norm_out = None
            self.conv_act = None
        self.conv_out = nn.Conv2d(64, 4, 3)

    def forward(self, sample):
        if self.conv_norm_out:
            # match: groupnorm_silu
            sample = self.conv_norm_out(sample)
            sample = self.conv_act(sample)
        return self.conv_out(sample)


class NamedSiLU(nn.Module):
    def __init__(self):
        super().__init__()
        self.norm = nn.GroupNorm(4, 64)
        self.act = get_activation("silu")
        self.gelu = get_activation("gelu")
        self.chosen = get_activation(self.pick())

    def pick(self):
        return "mish"

    def forward(self, x):
        # match: groupnorm_silu
        y = self.act(self.norm(x))
        # no-match: groupnorm_silu
        y = y + self.gelu(self.norm(x))
        # no-match: groupnorm_silu
        return y + self.chosen(self.norm(x))


class DefaultNotSiLU(nn.Module):
    def __init__(self, act_fn: str = "swish"):
        super().__init__()
        self.norm = nn.GroupNorm(4, 64)
        self.act = get_activation(act_fn)

    def forward(self, x):
        # (swish is SiLU under another name: not this rule's constant; the rewrite would be exact all the same)
        # no-match: groupnorm_silu
        return self.act(self.norm(x))
