# Fixture for adopter/rules/paper/bert_self_attention.adopt (anchored at the constructor in __init__).
from torch import nn

from transformers.models.bert.modeling_bert import BertSelfAttention
from transformers.models.bert.modeling_bert import BertSelfAttention as Aliased
from somewhere_else import BertSelfAttention as Foreign


class Wrapper(nn.Module):
    def __init__(self, config):
        super().__init__()
        # match: bert_self_attention
        self.attn = BertSelfAttention(config)

    def forward(self, hidden_states):
        return self.attn(hidden_states)[0]


class Conditional(nn.Module):
    def __init__(self, config):
        # match: bert_self_attention
        self.attn = BertSelfAttention(config)
        if config.add_cross_attention:
            # match: bert_self_attention
            self.cross = BertSelfAttention(config, is_cross_attention=True)

    def forward(self, hidden_states, encoder_hidden_states=None):
        out = self.attn(hidden_states)
        if encoder_hidden_states is not None:
            out = self.cross(out, encoder_hidden_states)
        return out


class ThroughAlias(nn.Module):
    def __init__(self, config):
        # match: bert_self_attention
        self.layer = Aliased(config)

    def forward(self, hidden_states):
        return self.helper(hidden_states)

    def helper(self, x):
        return self.layer(x)


class NeverCalled(nn.Module):
    def __init__(self, config):
        # no-match: bert_self_attention
        self.attn = BertSelfAttention(config)

    def forward(self, hidden_states):
        return hidden_states


class Lookalike(nn.Module):
    def __init__(self, config):
        # no-match: bert_self_attention
        self.attn = Foreign(config)

    def forward(self, hidden_states):
        return self.attn(hidden_states)


class OtherLayer(nn.Module):
    def __init__(self, config):
        # no-match: bert_self_attention
        self.attn = nn.MultiheadAttention(4, 2)

    def forward(self, hidden_states):
        return self.attn(hidden_states)


class ConstructedInForward(nn.Module):
    def forward(self, hidden_states):
        # no-match: bert_self_attention
        return BertSelfAttention(self.config)(hidden_states)


ATTENTION_CLASSES = {"eager": BertSelfAttention, "other": nn.MultiheadAttention}
OTHER_CLASSES = {"eager": nn.MultiheadAttention}


class ChosenFromADict(nn.Module):
    """transformers 4.4x: the class comes from a dict keyed by the attention implementation;
    found by what it may be, not rewritten (the class is chosen at run time)."""
    def __init__(self, config):
        # match: bert_self_attention
        self.self = ATTENTION_CLASSES[config._attn_implementation](config)

    def forward(self, hidden_states):
        return self.self(hidden_states)


class ChosenByACondition(nn.Module):
    """transformers 5: `X if c else Y`."""
    def __init__(self, config, is_cross_attention=False):
        attention_class = nn.MultiheadAttention if is_cross_attention else BertSelfAttention
        # match: bert_self_attention
        self.self = attention_class(config)

    def forward(self, hidden_states):
        return self.self(hidden_states)


class ChosenFromOtherClasses(nn.Module):
    def __init__(self, config):
        # no-match: bert_self_attention
        self.self = OTHER_CLASSES[config._attn_implementation](config)

    def forward(self, hidden_states):
        return self.self(hidden_states)
