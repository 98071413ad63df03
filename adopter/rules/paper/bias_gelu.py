# Fixture for adopter/rules/paper/bias_gelu.adopt.
from torch import nn

from transformers.activations import ACT2FN


class Intermediate(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.dense = nn.Linear(4, 16)
        if isinstance(config.hidden_act, str):
            self.act = ACT2FN[config.hidden_act]
        else:
            self.act = config.hidden_act

    def forward(self, h):
        # match: bias_gelu
        h = self.dense(h)
        h = self.act(h)
        return h


class Nested(Intermediate):
    def forward(self, h):
        # match: bias_gelu
        return self.act(self.dense(h))


class InSequential(nn.Module):
    def __init__(self, config):
        self.mlp = nn.Sequential(
            # match: bias_gelu
            nn.Linear(4, 4),
            ACT2FN[config.hidden_act],
        )

    def forward(self, h):
        return self.mlp(h)


class InHelper(Intermediate):
    def forward(self, h):
        return self.chunk(h)

    def chunk(self, h):
        # match: bias_gelu
        x = self.dense(h)
        return self.act(x)


class NoBias(nn.Module):
    def __init__(self, config):
        self.dense = nn.Linear(4, 16, bias=False)
        self.act = ACT2FN[config.hidden_act]

    def forward(self, h):
        # no-match: bias_gelu
        return self.act(self.dense(h))


class OtherKey(nn.Module):
    def __init__(self, config):
        self.dense = nn.Linear(4, 16)
        self.act = ACT2FN[config.activation_function]

    def forward(self, h):
        # match: bias_gelu
        return self.act(self.dense(h))


class DropoutBetween(Intermediate):
    def __init__(self, config):
        super().__init__(config)
        self.drop = nn.Dropout(0.1)

    def forward(self, h):
        # no-match: bias_gelu
        h = self.dense(h)
        h = self.drop(h)
        return self.act(h)


class Unconnected(Intermediate):
    def forward(self, h, g):
        # no-match: bias_gelu
        x = self.dense(h)
        return self.act(g), x


class InlineActivation(nn.Module):
    def __init__(self, config):
        self.config = config
        self.dense = nn.Linear(4, 16)

    def forward(self, h):
        # an activation built where it is called (the modern ground truth counts roformer's)
        # match: bias_gelu
        return ACT2FN[self.config.hidden_act](self.dense(h))


class InlineActivationNoBias(nn.Module):
    def __init__(self, config):
        self.config = config
        self.dense = nn.Linear(4, 16, bias=False)

    def forward(self, h):
        # no-match: bias_gelu
        return ACT2FN[self.config.hidden_act](self.dense(h))
