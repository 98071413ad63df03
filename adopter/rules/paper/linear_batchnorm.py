# Fixture for adopter/rules/paper/linear_batchnorm.adopt.
from torch import nn


class Projection(nn.Module):
    def __init__(self, d):
        self.visual_projection = nn.Sequential(
            # match: linear_batchnorm
            nn.Linear(d, d, bias=True),
            nn.BatchNorm1d(d),
            nn.ReLU(inplace=True),
            # match: linear_batchnorm
            nn.Linear(d, d, bias=True),
            nn.BatchNorm1d(d),
        )

    def forward(self, x):
        return self.visual_projection(x)


class Plain(nn.Module):
    def __init__(self, d):
        self.fc = nn.Linear(d, d)
        self.bn = nn.BatchNorm1d(d)

    def forward(self, x):
        # match: linear_batchnorm
        y = self.fc(x)
        return self.bn(y)


class ModuleListLoop(nn.Module):
    def __init__(self, d):
        self.fcs = nn.ModuleList([nn.Linear(d, d) for _ in range(3)])
        self.bn = nn.BatchNorm1d(d)

    def forward(self, x):
        for fc in self.fcs:
            # match: linear_batchnorm
            x = fc(x)
            x = self.bn(x)
        return x


class FlattenBetween(nn.Module):
    def __init__(self, d):
        self.fc = nn.Linear(d, d)
        self.bn = nn.BatchNorm1d(d)

    def forward(self, x):
        # no-match: linear_batchnorm
        x = self.fc(x)
        x = x.flatten(1)
        return self.bn(x)


class TwoDimensionalNorm(nn.Module):
    def __init__(self, d):
        self.fc = nn.Linear(d, d)
        self.bn = nn.BatchNorm2d(d)

    def forward(self, x):
        # no-match: linear_batchnorm
        return self.bn(self.fc(x))


class DifferentInputs(nn.Module):
    def __init__(self, d):
        self.fc = nn.Linear(d, d)
        self.bn = nn.BatchNorm1d(d)

    def forward(self, x, y):
        # no-match: linear_batchnorm
        a = self.fc(x)
        return self.bn(y), a


class LinearOutputReturned(nn.Module):
    def __init__(self, d):
        self.fc = nn.Linear(d, d)
        self.bn = nn.BatchNorm1d(d)

    def forward(self, x):
        # no-match: linear_batchnorm
        a = self.fc(x)
        return self.bn(a), a
