# Fixture for adopter/rules/paper/dropout_layernorm.adopt.
from torch import nn


class SelfOutput(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.dense = nn.Linear(4, 4)
        self.LayerNorm = nn.LayerNorm(4, eps=1e-12)
        self.dropout = nn.Dropout(0.1)

    def forward(self, hidden_states, input_tensor):
        hidden_states = self.dense(hidden_states)
        # match: dropout_layernorm
        hidden_states = self.dropout(hidden_states)
        hidden_states = self.LayerNorm(hidden_states + input_tensor)
        return hidden_states


class Nested(SelfOutput):
    def forward(self, h, r):
        # match: dropout_layernorm
        return self.LayerNorm(self.dropout(h) + r)


class Extraneous(SelfOutput):
    def forward(self, h, r):
        # match: dropout_layernorm
        x = self.dropout(h)
        unrelated = r * 2
        s = x + r
        print(unrelated)
        return self.LayerNorm(s)


class Aliased(nn.Module):
    def __init__(self):
        drop = nn.Dropout(0.1)
        self.drop = drop
        self.norm = nn.LayerNorm(4)

    def forward(self, h, r):
        d = self.drop
        # match: dropout_layernorm
        y = d(h)
        z = y + r
        return self.norm(z)


class ThroughHelper(SelfOutput):
    def forward(self, h, r):
        # match: dropout_layernorm
        return self.post(self.dropout(h), r)

    def post(self, x, residual):
        return self.LayerNorm(x + residual)


class Reassigned(SelfOutput):
    def forward(self, h, r):
        # no-match: dropout_layernorm
        x = self.dropout(h)
        x = r * 2
        return self.LayerNorm(x + r)


class SumReadElsewhere(SelfOutput):
    def forward(self, h, r):
        # no-match: dropout_layernorm
        s = self.dropout(h) + r
        residual = s
        return self.LayerNorm(s), residual


class Contradictory(SelfOutput):
    def forward(self, h, r):
        if self.flag:
            # no-match: dropout_layernorm
            h = self.dropout(h)
        if not self.flag:
            h = self.LayerNorm(h + r)
        return h


class WrongTypes(nn.Module):
    def __init__(self):
        self.dropout = nn.Identity()
        self.LayerNorm = nn.LayerNorm(4)

    def forward(self, h, r):
        # no-match: dropout_layernorm
        return self.LayerNorm(self.dropout(h) + r)


class Unconnected(SelfOutput):
    def forward(self, h, r):
        # no-match: dropout_layernorm
        a = self.dropout(h)
        b = h + r
        return self.LayerNorm(b), a


class ResidualFirst(SelfOutput):
    """`+` commutes: the residual may come first."""
    def forward(self, h, r):
        # match: dropout_layernorm
        return self.LayerNorm(r + self.dropout(h))


class ResidualFirstStatements(SelfOutput):
    def forward(self, hidden_states, residual):
        # match: dropout_layernorm
        hidden_states = residual + self.dropout(hidden_states)
        hidden_states = self.LayerNorm(hidden_states)
        return hidden_states


class ResidualMinusDropout(SelfOutput):
    def forward(self, h, r):
        # no-match: dropout_layernorm
        return self.LayerNorm(r - self.dropout(h))
