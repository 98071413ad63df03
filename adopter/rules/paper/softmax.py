# Fixture for adopter/rules/paper/softmax.adopt: `# match: <id>` / `# no-match: <id>` annotate the next line.
import functools

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.nn import functional
from torch.nn.functional import softmax as sm
from torch_einops_utils.nn import Sequential as EinopsSequential
from unmodelled.nn import Sequential as OtherSequential


class Attention(nn.Module):
    def forward(self, scores, mask):
        # match: softmax
        a = F.softmax(scores, dim=-1)
        # match: softmax
        b = nn.functional.softmax(scores + mask, dim=-1)
        # match: softmax
        c = torch.nn.functional.softmax(self.scale(scores), dim=-1)
        # match: softmax
        d = sm(scores, -1)
        # match: softmax
        e = functional.softmax(scores, dim=1)
        # match: softmax
        f = torch.softmax(scores, dim=-1)
        # match: softmax
        g = scores.softmax(dim=-1)
        # no-match: softmax
        h = scores.log_softmax(dim=-1)
        return a, b, c, d, e, f, g, h

    def scale(self, x):
        # match: softmax
        return F.softmax(x, dim=-1) * 2


class Spellings(nn.Module):
    """Every spelling of a softmax is one: a module built in `__init__` or where it is called, a
    `functools.partial` of F.softmax (also of a partial) stored on self, a method of a value not
    known to be a tensor (a loop variable)."""
    def __init__(self):
        super().__init__()
        self.attend = nn.Softmax(dim=-1)
        self.attn_fn = functools.partial(functools.partial(F.softmax, dim=-1), dtype=torch.float32)
        self.norm = nn.LayerNorm(8)

    def forward(self, scores, pairs):
        # match: softmax
        a = self.attend(scores)
        # match: softmax
        b = nn.Softmax(dim=-1)(scores)
        # match: softmax
        c = self.attn_fn(scores)
        for logits, _ in zip(pairs, pairs):
            # match: softmax
            d = logits.softmax(-1)
        # no-match: softmax
        e = nn.Softmax(-1)
        # no-match: softmax
        f = self.norm(scores)
        # match: softmax
        g = e(f)
        return a + b + c + d + g


class Shadowed(nn.Module):
    def forward(self, x, F):
        # no-match: softmax
        return F.softmax(x, dim=-1)


class Unreachable(nn.Module):
    def forward(self, x):
        return x

    def unused(self, x):
        # no-match: softmax
        return F.softmax(x, dim=-1)


def module_level(x):
    # no-match: softmax
    return F.softmax(x, dim=-1)


def eager_attention_forward(module, query, key, value, scaling, dropout=0.0):
    scores = torch.matmul(query, key.transpose(2, 3)) * scaling
    # match: softmax
    weights = nn.functional.softmax(scores, dim=-1, dtype=torch.float32).to(query.dtype)
    weights = nn.functional.dropout(weights, p=dropout, training=module.training)
    return torch.matmul(weights, value)


def sdpa_attention_forward(module, query, key, value, scaling, dropout=0.0):
    # no-match: softmax
    return F.softmax(query, dim=-1)  # the registry's entries are not analysed, only its default


ATTENTION_FUNCTIONS = {"sdpa": sdpa_attention_forward}


class InterfaceDefault(nn.Module):
    """transformers 5: the kernel comes from a registry, the file's eager function is the default."""
    def forward(self, q, k, v):
        attention_interface = ATTENTION_FUNCTIONS.get_interface(self.config._attn_implementation, eager_attention_forward)
        return attention_interface(self, q, k, v, scaling=0.125)


class GetattrDefault(nn.Module):
    def forward(self, q, k, v):
        attention_interface = getattr(ATTENTION_FUNCTIONS, self.config._attn_implementation, eager_attention_forward)
        return attention_interface(self, q, k, v, 0.125)


class RegistryEntry(nn.Module):
    def forward(self, q, k, v):
        attention_interface = ATTENTION_FUNCTIONS[self.config._attn_implementation]
        return attention_interface(self, q, k, v, 0.125)


def load_balancing(logits):
    # match: softmax
    return F.softmax(logits, dim=-1).mean()


class CalledByName(nn.Module):
    def forward(self, logits):
        # match: softmax
        # match: softmax
        a = F.softmax(logits, dim=-1) + F.softmax(logits, dim=0)
        return a + load_balancing(logits)


def sparse_attn(logits, dim=-1, topk=2):
    # match: softmax
    return logits.softmax(dim=dim)


class StoredPartialOfAFunction(nn.Module):
    """x-transformers' Attend: a module-level function stored on self through functools.partial
    runs where the attribute is called."""
    def __init__(self):
        super().__init__()
        self.attn_fn = functools.partial(sparse_attn, dim=-1, topk=4)

    def forward(self, sim):
        return self.attn_fn(sim)


class LibrarySequential(nn.Module):
    """x-transformers' layer weights: torch-einops-utils' Sequential (which drops the layers that
    are None) runs its layers as nn.Sequential does (datalog/models/einops_utils.lp)."""
    def __init__(self, dim, norm=True):
        super().__init__()
        self.to_weights = EinopsSequential(
            nn.LayerNorm(dim) if norm else None,
            nn.Linear(dim, 4),
            # match: softmax
            nn.Softmax(dim=-1),
        )
        # a library the analyses know nothing of: its Sequential may not call its arguments
        self.unknown = OtherSequential(
            nn.Linear(dim, 4),
            # no-match: softmax
            nn.Softmax(dim=-1),
        )

    def forward(self, x):
        return self.to_weights(x) + self.unknown(x)
