# Fixture for adopter/rules/paper/conv_batchnorm.adopt.
import functools

from torch import nn


class PreActResidual(nn.Module):
    def __init__(self, use_bn):
        self.conv1 = nn.Conv2d(1, 1, 1)
        self.conv2 = nn.Conv2d(1, 1, 1)
        if use_bn:
            self.bn1 = nn.BatchNorm2d(1)
            self.bn2 = nn.BatchNorm2d(1)
        self.act = nn.ReLU()

    def forward(self, x):
        # match: conv_batchnorm
        x = self.conv1(x)
        if self.use_bn:
            x = self.bn1(x)
        x = self.act(x)
        # match: conv_batchnorm
        x = self.conv2(x)
        if self.use_bn:
            x = self.bn2(x)
        return x


class NestedConditionalNorm(nn.Module):
    def __init__(self, apply_norm):
        self.conv = nn.Conv2d(1, 1, 1)
        self.norm = nn.BatchNorm2d(1) if apply_norm else nn.Identity()

    def forward(self, x):
        # match: conv_batchnorm
        return self.norm(self.conv(x))


class InSequential(nn.Module):
    def __init__(self):
        self.stem = nn.Sequential(
            # match: conv_batchnorm
            nn.Conv2d(1, 1, 1),
            nn.BatchNorm2d(1),
            nn.ReLU(),
            # match: conv_batchnorm
            nn.Conv2d(1, 1, 1),
            nn.BatchNorm2d(1),
        )

    def forward(self, x):
        return self.stem(x)


class InListBuiltSequential(nn.Module):
    def __init__(self, n):
        downs = []
        for i in range(n):
            # match: conv_batchnorm
            downs.append(nn.Sequential(nn.Conv2d(1, 1, 3), nn.BatchNorm2d(1)))
        self.down = nn.Sequential(*downs)
        layers = []
        for i in range(n):
            # match: conv_batchnorm
            layers.extend([nn.Conv2d(1, 1, 3), nn.BatchNorm2d(1), nn.ReLU()])
        self.level = nn.Sequential(*layers)
        reordered = []
        for i in range(n):
            # no-match: conv_batchnorm
            reordered.extend([nn.Conv2d(1, 1, 3), nn.BatchNorm2d(1)])
        reordered.insert(1, nn.ReLU())
        self.reordered = nn.Sequential(*reordered)

    def forward(self, x):
        return self.reordered(self.level(self.down(x)))


class ActivationBetween(nn.Module):
    def __init__(self):
        self.conv = nn.Conv2d(1, 1, 1)
        self.act = nn.ReLU()
        self.bn = nn.BatchNorm2d(1)

    def forward(self, x):
        # no-match: conv_batchnorm
        x = self.conv(x)
        x = self.act(x)
        return self.bn(x)


class OneDimensional(nn.Module):
    def __init__(self):
        self.conv = nn.Conv1d(1, 1, 1)
        self.bn = nn.BatchNorm1d(1)

    def forward(self, x):
        # no-match: conv_batchnorm
        return self.bn(self.conv(x))


class ConvOutputReused(nn.Module):
    def __init__(self):
        self.conv = nn.Conv2d(1, 1, 1)
        self.bn = nn.BatchNorm2d(1)

    def forward(self, x):
        # no-match: conv_batchnorm
        y = self.conv(x)
        z = self.bn(y)
        return z + y


class ContradictoryGuards(nn.Module):
    def __init__(self):
        self.conv = nn.Conv2d(1, 1, 1)
        self.bn = nn.BatchNorm2d(1)

    def forward(self, x):
        if self.pre:
            # no-match: conv_batchnorm
            x = self.conv(x)
        if not self.pre:
            x = self.bn(x)
        return x


class Video(nn.Module):
    """Three dimensions: conv_batchnorm.conv3d.adopt (found, not rewritten)."""
    def __init__(self):
        self.stem = nn.Sequential(
            # match: conv_batchnorm
            nn.Conv3d(3, 8, kernel_size=(3, 7, 7), bias=False),
            nn.BatchNorm3d(8),
            nn.ReLU(inplace=True),
        )
        self.conv = nn.Conv3d(8, 8, 1)
        self.bn = nn.BatchNorm3d(8)
        self.bn2d = nn.BatchNorm2d(8)

    def forward(self, x):
        x = self.stem(x)
        # match: conv_batchnorm
        y = self.bn(self.conv(x))
        # no-match: conv_batchnorm
        return self.bn2d(self.conv(y))


class Head(nn.Sequential):
    """An nn.Sequential subclass given its layers by `super().__init__(...)`: Sequential's forward runs them."""
    def __init__(self, c):
        super().__init__(
            # match: conv_batchnorm
            nn.Conv2d(c, c, 3, bias=False),
            nn.BatchNorm2d(c),
            nn.ReLU(),
        )


class ListHead(nn.Sequential):
    def __init__(self, c):
        # match: conv_batchnorm
        layers = [nn.Conv2d(c, c, 3, bias=False), nn.BatchNorm2d(c), nn.ReLU()]
        super().__init__(*layers)


class HeadWithOwnForward(nn.Sequential):
    """Its own forward decides what runs: the layers are not a sequence."""
    def __init__(self, c):
        # no-match: conv_batchnorm
        super().__init__(nn.Conv2d(c, c, 3), nn.BatchNorm2d(c))

    def forward(self, x):
        return x


class BuiltByABuilder(nn.Module):
    """A conv a builder returns, inside an nn.Sequential: found at the Sequential's element that calls the builder."""
    @staticmethod
    def depthwise(c):
        return nn.Conv2d(c, c, 3, groups=c, bias=False)

    def __init__(self, c):
        super().__init__()
        self.branch = nn.Sequential(
            # match: conv_batchnorm
            self.depthwise(c),
            nn.BatchNorm2d(c),
        )

    def forward(self, x):
        return self.branch(x)


class DownsampledBlock(nn.Module):
    def __init__(self, downsample):
        super().__init__()
        self.conv = nn.Conv2d(4, 4, 3)
        self.downsample = downsample

    def forward(self, x):
        return self.conv(x) + self.downsample(x)


class HandsItsSequentialToABlock(nn.Module):
    """A Sequential handed to another layer's constructor runs its layers in order wherever that
    layer calls it: found where it is built (torchvision's ResNet downsampling)."""
    def __init__(self, norm_layer=None):
        super().__init__()
        if norm_layer is None:
            norm_layer = nn.BatchNorm2d
        self._norm_layer = norm_layer
        self.block = self._make_block(4)

    def _make_block(self, c):
        norm_layer = self._norm_layer
        downsample = nn.Sequential(
            # match: conv_batchnorm
            nn.Conv2d(c, c, 1, bias=False),
            norm_layer(c),
        )
        return DownsampledBlock(downsample)

    def forward(self, x):
        return self.block(x)


class ConvNormActivation(nn.Sequential):
    """A list filled outside loops: each item has its place, an appended norm follows the conv
    whenever it is appended (torchvision's ops.misc)."""
    def __init__(self, c, norm_layer=nn.BatchNorm2d, activation_layer=nn.ReLU):
        # match: conv_batchnorm
        layers = [nn.Conv2d(c, c, 3, bias=False)]
        if norm_layer is not None:
            layers.append(norm_layer(c))
        if activation_layer is not None:
            layers.append(activation_layer())
        super().__init__(*layers)


class DropoutMayComeBetween(nn.Sequential):
    def __init__(self, c, drop):
        # no-match: conv_batchnorm
        layers = [nn.Conv2d(c, c, 3, bias=False)]
        if drop:
            layers.append(nn.Dropout())
        layers.append(nn.BatchNorm2d(c))
        super().__init__(*layers)


def make_layers(cfg, batch_norm=False):
    """A module-level builder of a Sequential from a list that `+=` extends in a loop (torchvision's VGG)."""
    layers = []
    in_channels = 3
    for v in cfg:
        # match: conv_batchnorm
        conv2d = nn.Conv2d(in_channels, v, kernel_size=3, padding=1)
        if batch_norm:
            layers += [conv2d, nn.BatchNorm2d(v), nn.ReLU(inplace=True)]
        else:
            layers += [conv2d, nn.ReLU(inplace=True)]
        in_channels = v
    return nn.Sequential(*layers)


class NormFromAPartial(nn.Module):
    def __init__(self, c, norm_layer=None):
        super().__init__()
        if norm_layer is None:
            norm_layer = functools.partial(nn.BatchNorm2d, eps=1e-3)
        self.conv = nn.Conv2d(c, c, 3)
        self.bn = norm_layer(c)

    def forward(self, x):
        # match: conv_batchnorm
        return self.bn(self.conv(x))


class PooledBranch(nn.Sequential):
    """Its own forward runs the layers as Sequential's does, in one loop (torchvision's ASPPPooling)."""
    def __init__(self, c):
        super().__init__(
            nn.AdaptiveAvgPool2d(1),
            # match: conv_batchnorm
            nn.Conv2d(c, c, 1, bias=False),
            nn.BatchNorm2d(c),
        )

    def forward(self, x):
        size = x.shape[-2:]
        for mod in self:
            x = mod(x)
        return nn.functional.interpolate(x, size=size)


class EachLayerOnTheInput(nn.Sequential):
    """A loop that gives every layer the same input does not chain them."""
    def __init__(self, c):
        # no-match: conv_batchnorm
        super().__init__(nn.Conv2d(c, c, 1), nn.BatchNorm2d(c))

    def forward(self, x):
        outs = []
        for mod in self:
            outs.append(mod(x))
        return outs


class Conv3DSimple(nn.Conv3d):
    """An in-file subclass that keeps nn.Conv3d's forward builds an nn.Conv3d (torchvision's video ResNet)."""
    def __init__(self, c_in, c_out):
        super().__init__(c_in, c_out, kernel_size=3, padding=1, bias=False)


class Conv3DOwnForward(nn.Conv3d):
    def forward(self, x):
        return super().forward(x).relu()


class VideoBlock(nn.Module):
    """The conv class comes from the caller's caller: a module function passes a list of classes to
    the network, which passes one item to a method through self, which builds this block with it."""
    def __init__(self, planes, conv_builder):
        super().__init__()
        self.conv1 = nn.Sequential(
            # match: conv_batchnorm
            conv_builder(planes, planes), nn.BatchNorm3d(planes), nn.ReLU(inplace=True)
        )

    def forward(self, x):
        return self.conv1(x)


class OwnForwardBlock(VideoBlock):
    """Built only with a subclass whose forward is its own: no conv of torch's runs there."""
    def __init__(self, planes, conv_builder):
        super().__init__(planes, conv_builder)
        self.conv2 = nn.Sequential(
            # no-match: conv_batchnorm
            conv_builder(planes, planes), nn.BatchNorm3d(planes)
        )

    def forward(self, x):
        return self.conv2(x)


class VideoNet(nn.Module):
    def __init__(self, block, conv_makers):
        super().__init__()
        self.layer1 = self._make_layer(block, conv_makers[0], 8)
        self.layer2 = OwnForwardBlock(8, Conv3DOwnForward)

    def _make_layer(self, block, conv_builder, planes):
        return nn.Sequential(block(planes, conv_builder))

    def forward(self, x):
        return self.layer2(self.layer1(x))


def video_net():
    return VideoNet(VideoBlock, [Conv3DSimple] * 4)
