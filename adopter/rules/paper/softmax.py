# Fixture for adopter/rules/paper/softmax.adopt: `# match: <id>` / `# no-match: <id>` annotate the next line.
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.nn import functional
from torch.nn.functional import softmax as sm


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
        # no-match: softmax
        f = torch.softmax(scores, dim=-1)
        # no-match: softmax
        g = scores.softmax(dim=-1)
        return a, b, c, d, e, f, g

    def scale(self, x):
        # match: softmax
        return F.softmax(x, dim=-1) * 2


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
