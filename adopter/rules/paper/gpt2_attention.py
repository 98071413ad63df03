# Fixture for adopter/rules/paper/gpt2_attention.adopt (anchored at the constructor in __init__).
from torch import nn

from transformers.models.gpt2.modeling_gpt2 import GPT2Attention
from transformers.models.gpt2.modeling_gpt2 import GPT2Attention as Aliased
from somewhere_else import GPT2Attention as Foreign


class Wrapper(nn.Module):
    def __init__(self, config):
        super().__init__()
        # match: gpt2_attention
        self.attn = GPT2Attention(config)

    def forward(self, hidden_states):
        return self.attn(hidden_states)[0]


class Conditional(nn.Module):
    def __init__(self, config):
        # match: gpt2_attention
        self.attn = GPT2Attention(config)
        if config.add_cross_attention:
            # match: gpt2_attention
            self.cross = GPT2Attention(config, is_cross_attention=True)

    def forward(self, hidden_states, encoder_hidden_states=None):
        out = self.attn(hidden_states)
        if encoder_hidden_states is not None:
            out = self.cross(out, encoder_hidden_states)
        return out


class ThroughAlias(nn.Module):
    def __init__(self, config):
        # match: gpt2_attention
        self.layer = Aliased(config)

    def forward(self, hidden_states):
        return self.helper(hidden_states)

    def helper(self, x):
        return self.layer(x)


class NeverCalled(nn.Module):
    def __init__(self, config):
        # no-match: gpt2_attention
        self.attn = GPT2Attention(config)

    def forward(self, hidden_states):
        return hidden_states


class Lookalike(nn.Module):
    def __init__(self, config):
        # no-match: gpt2_attention
        self.attn = Foreign(config)

    def forward(self, hidden_states):
        return self.attn(hidden_states)


class OtherLayer(nn.Module):
    def __init__(self, config):
        # no-match: gpt2_attention
        self.attn = nn.MultiheadAttention(4, 2)

    def forward(self, hidden_states):
        return self.attn(hidden_states)


class ConstructedInForward(nn.Module):
    def forward(self, hidden_states):
        # no-match: gpt2_attention
        return GPT2Attention(self.config)(hidden_states)
