# Fixture for adopter/rules/paper/t5_attention.adopt (anchored at the constructor in __init__).
from torch import nn

from transformers.models.t5.modeling_t5 import T5Attention
from transformers.models.t5.modeling_t5 import T5Attention as Aliased
from somewhere_else import T5Attention as Foreign


class Wrapper(nn.Module):
    def __init__(self, config):
        super().__init__()
        # match: t5_attention
        self.attn = T5Attention(config)

    def forward(self, hidden_states):
        return self.attn(hidden_states)[0]


class Conditional(nn.Module):
    def __init__(self, config):
        # match: t5_attention
        self.attn = T5Attention(config)
        if config.add_cross_attention:
            # match: t5_attention
            self.cross = T5Attention(config, is_cross_attention=True)

    def forward(self, hidden_states, encoder_hidden_states=None):
        out = self.attn(hidden_states)
        if encoder_hidden_states is not None:
            out = self.cross(out, encoder_hidden_states)
        return out


class ThroughAlias(nn.Module):
    def __init__(self, config):
        # match: t5_attention
        self.layer = Aliased(config)

    def forward(self, hidden_states):
        return self.helper(hidden_states)

    def helper(self, x):
        return self.layer(x)


class NeverCalled(nn.Module):
    def __init__(self, config):
        # no-match: t5_attention
        self.attn = T5Attention(config)

    def forward(self, hidden_states):
        return hidden_states


class Lookalike(nn.Module):
    def __init__(self, config):
        # no-match: t5_attention
        self.attn = Foreign(config)

    def forward(self, hidden_states):
        return self.attn(hidden_states)


class OtherLayer(nn.Module):
    def __init__(self, config):
        # no-match: t5_attention
        self.attn = nn.MultiheadAttention(4, 2)

    def forward(self, hidden_states):
        return self.attn(hidden_states)


class ConstructedInForward(nn.Module):
    def forward(self, hidden_states):
        # no-match: t5_attention
        return T5Attention(self.config)(hidden_states)
