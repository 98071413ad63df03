# Fixture for adopter/rules/paper/fused_qkv.adopt.
import torch
from torch import nn


class SplitHeads(nn.Module):
    def __init__(self, d):
        self.q_proj = nn.Linear(d, d)
        self.k_proj = nn.Linear(d, d)
        self.v_proj = nn.Linear(d, d)

    def _split_heads(self, tensor, num_heads, head_dim):
        new_shape = tensor.size()[:-1] + (num_heads, head_dim)
        tensor = tensor.view(new_shape)
        return tensor.permute(0, 2, 1, 3)

    def forward(self, hidden_states):
        # match: fused_qkv
        query = self.q_proj(hidden_states)
        key = self.k_proj(hidden_states)
        value = self.v_proj(hidden_states)
        query = self._split_heads(query, 2, 2)
        key = self._split_heads(key, 2, 2)
        value = self._split_heads(value, 2, 2)
        return torch.matmul(query, key.transpose(-1, -2)), value


class TransposeForScores(nn.Module):
    def __init__(self, d):
        self.query = nn.Linear(d, d)
        self.key = nn.Linear(d, d)
        self.value = nn.Linear(d, d)

    def transpose_for_scores(self, x):
        new_x_shape = x.size()[:-1] + (2, 2)
        x = x.view(new_x_shape)
        return x.permute(0, 2, 1, 3)

    def forward(self, hidden_states):
        # match: fused_qkv
        mixed_query_layer = self.query(hidden_states)
        mixed_key_layer = self.key(hidden_states)
        mixed_value_layer = self.value(hidden_states)
        query_layer = self.transpose_for_scores(mixed_query_layer)
        key_layer = self.transpose_for_scores(mixed_key_layer)
        value_layer = self.transpose_for_scores(mixed_value_layer)
        return query_layer, key_layer, value_layer


class Inline(TransposeForScores):
    def forward(self, h):
        # match: fused_qkv
        q = self.query(h)
        k = self.key(h)
        v = self.value(h)
        q = q.view(q.size()[:-1] + (2, 2))
        k = k.view(k.size()[:-1] + (2, 2))
        v = v.view(v.size()[:-1] + (2, 2))
        return q, k, v


class Renamed(TransposeForScores):
    def forward(self, x):
        a = x
        # match: fused_qkv
        q = self.query(a)
        k = self.key(x)
        v = self.value(a)
        return self.transpose_for_scores(q), self.transpose_for_scores(k), self.transpose_for_scores(v)


class CrossAttentionInputs(TransposeForScores):
    def forward(self, hidden_states, context):
        # no-match: fused_qkv
        q = self.query(hidden_states)
        k = self.key(context)
        v = self.value(context)
        return self.transpose_for_scores(q), self.transpose_for_scores(k), self.transpose_for_scores(v)


class KeyValueUnderBranch(TransposeForScores):
    def forward(self, hidden_states, encoder_states=None):
        # no-match: fused_qkv
        q = self.query(hidden_states)
        if encoder_states is not None:
            k = self.key(encoder_states)
            v = self.value(encoder_states)
        else:
            k = self.key(hidden_states)
            v = self.value(hidden_states)
        return self.transpose_for_scores(q), self.transpose_for_scores(k), self.transpose_for_scores(v)


class Interleaved(TransposeForScores):
    def forward(self, hidden_states):
        # match: fused_qkv
        q = self.query(hidden_states)
        k = self.transpose_for_scores(self.key(hidden_states))
        v = self.transpose_for_scores(self.value(hidden_states))
        return self.transpose_for_scores(q), k, v


class NoHeadSplit(TransposeForScores):
    def forward(self, hidden_states):
        # no-match: fused_qkv
        q = self.query(hidden_states)
        k = self.key(hidden_states)
        v = self.value(hidden_states)
        return q + k + v


class ChainedView(TransposeForScores):
    def forward(self, hidden_states):
        shape = (*hidden_states.shape[:-1], -1, 2)
        # match: fused_qkv
        q = self.query(hidden_states).view(shape).transpose(1, 2)
        k = self.key(hidden_states).view(shape).transpose(1, 2)
        v = self.value(hidden_states).reshape(shape).transpose(1, 2)
        return q, k, v


class ProjectionReadElsewhere(TransposeForScores):
    def forward(self, hidden_states):
        # no-match: fused_qkv
        q = self.query(hidden_states)
        k = self.key(hidden_states)
        v = self.value(hidden_states)
        return self.transpose_for_scores(q), self.transpose_for_scores(k), self.transpose_for_scores(v), q


class ScaledBeforeSplit(TransposeForScores):
    def forward(self, hidden_states):
        # no-match: fused_qkv
        q = self.query(hidden_states) * 0.5
        k = self.key(hidden_states)
        v = self.value(hidden_states)
        return self.transpose_for_scores(q), self.transpose_for_scores(k), self.transpose_for_scores(v)


class QueryFromAnotherInputWhenGiven(TransposeForScores):
    def forward(self, hidden_states, query_states=None):
        if query_states is None:
            query_states = hidden_states
        # no-match: fused_qkv
        q = self.query(query_states)
        k = self.key(hidden_states)
        v = self.value(hidden_states)
        return self.transpose_for_scores(q), self.transpose_for_scores(k), self.transpose_for_scores(v)


class ProjectedInOneBranchSplitAfter(TransposeForScores):
    def forward(self, hidden_states):
        if self.training:
            q = k = v = hidden_states
        else:
            # match: fused_qkv
            q = self.query(hidden_states)
            k = self.key(hidden_states)
            v = self.value(hidden_states)
        return self.transpose_for_scores(q), self.transpose_for_scores(k), self.transpose_for_scores(v)
