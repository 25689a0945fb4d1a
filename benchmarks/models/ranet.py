"""RANet, Resolution Adaptive Network (Yang et al., CVPR 2020), at anytime/budgeted inference:
sub-networks see the image at 1/4, 1/2 and full resolution; each one fuses the (upsampled)
features of the previous, coarser one and ends in a classifier. Inference classifies the
low-resolution image first and only runs the next, higher-resolution sub-network when the
current classifier is not confident."""

import torch
import torch.nn.functional as F
from torch import nn

from . import _common

NAME = "ranet"
DESCRIPTION = (
    "RANet: 3 sub-networks at 8x8, 16x16 and 32x32 (each fusing the upsampled coarser features); "
    "stops at the first classifier whose max softmax prob exceeds a threshold"
)


def conv_bn(cin, cout, stride=1):
    return nn.Sequential(
        nn.Conv2d(cin, cout, 3, stride=stride, padding=1, bias=False),
        nn.BatchNorm2d(cout),
        nn.ReLU(inplace=True),
    )


class SubNet(nn.Module):
    """Convs at one resolution; fuses the coarser sub-network's features (upsampled x2)."""

    def __init__(self, channels, coarse_channels=None):
        super().__init__()
        self.stem = conv_bn(3, channels)
        self.fuse = None
        if coarse_channels is not None:
            self.fuse = nn.Sequential(
                nn.Conv2d(channels + coarse_channels, channels, 1, bias=False),
                nn.BatchNorm2d(channels),
                nn.ReLU(inplace=True),
            )
        self.body = nn.Sequential(conv_bn(channels, channels), conv_bn(channels, channels))

    def forward(self, x, coarse=None):
        x = self.stem(x)
        if coarse is not None:
            coarse = F.interpolate(coarse, scale_factor=2.0, mode="nearest")
            x = self.fuse(torch.cat([x, coarse], dim=1))
        return self.body(x)


class Classifier(nn.Module):
    def __init__(self, channels, num_classes):
        super().__init__()
        self.conv = conv_bn(channels, channels, stride=2)
        self.linear = nn.Linear(channels, num_classes)

    def forward(self, x):
        return self.linear(F.adaptive_avg_pool2d(self.conv(x), 1).flatten(1))


class RANet(nn.Module):
    def __init__(self, channels=(32, 24, 16), scales=(4, 2, 1), num_classes=10, threshold=0.8):
        super().__init__()
        self.scales = scales
        self.threshold = threshold
        self.subnets = nn.ModuleList(
            SubNet(c, channels[i - 1] if i > 0 else None) for i, c in enumerate(channels)
        )
        self.classifiers = nn.ModuleList(Classifier(c, num_classes) for c in channels)

    def forward(self, x):
        features = None
        for scale, subnet, classifier in zip(self.scales, self.subnets, self.classifiers):
            xs = F.avg_pool2d(x, scale) if scale > 1 else x
            features = subnet(xs, features)
            logits = classifier(features)
            if scale == 1 or F.softmax(logits, dim=1).max() > self.threshold:
                return logits
        return logits  # not reached: the last sub-network runs at full resolution


def build():
    torch.manual_seed(0)
    model = RANet().eval()
    _calibrate(model, inputs(64, seed=1234))
    return model, (torch.randn(1, 3, 32, 32),), None


inputs = _common.image_inputs


decision = _common.argmax_decision


def path(model, *args) -> tuple:
    """One bool per confidence test evaluated (all but the last classifier): True = stopped."""
    with torch.no_grad(), _common.recording(*model.classifiers) as calls:
        model(*args)
    return tuple(
        bool(F.softmax(logits, dim=1).max() > model.threshold)
        for i, logits in calls
        if model.scales[i] != 1
    )


@torch.no_grad()
def _calibrate(model, calibration):
    threshold, model.threshold = model.threshold, 2.0  # never confident: record every classifier
    for classifier in model.classifiers:  # pooled features of unit scale, as after training
        _common.set_batchnorm_stats(model, classifier.conv[1], calibration)
    logits = [[] for _ in model.classifiers]
    with _common.recording(*model.classifiers) as calls:
        for args in calibration:
            model(*args)
    for i, out in calls:
        logits[i].append(out)
    logits = [torch.cat(z) for z in logits]
    model.threshold = threshold
    last = model.classifiers[-1].linear
    last.bias -= logits[-1].mean(0)  # no dominant class at the last exit
    _common.calibrate_exits(
        [c.linear for c in model.classifiers[:-1]],
        logits[:-1],
        lambda z: F.softmax(z, dim=1).amax(dim=1) > threshold,
        (0.35, 0.5),
    )
