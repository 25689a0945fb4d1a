"""Shallow-Deep Network (Kaya et al., ICML 2019): a CNN with internal classifiers (early exits).

Inference follows the SDN repository's early-exit loop: after each block an internal classifier
runs, and the first one whose max softmax probability exceeds a threshold returns its logits.
"""

import torch
import torch.nn.functional as F
from torch import nn

from . import _common

NAME = "shallow_deep"
DESCRIPTION = (
    "Shallow-Deep Network: CNN with 3 internal classifiers + final head; "
    "returns at the first exit whose max softmax prob exceeds a threshold (early return)"
)
NUM_CLASSES = 10


def conv_bn(cin, cout, stride):
    return nn.Sequential(
        nn.Conv2d(cin, cout, 3, stride=stride, padding=1, bias=False),
        nn.BatchNorm2d(cout),
        nn.ReLU(inplace=True),
    )


class InternalClassifier(nn.Module):
    """SDN's internal classifier: mixed max/avg pooling down to a small map, then a linear layer."""

    def __init__(self, channels, pool_size, num_classes):
        super().__init__()
        self.pool_size = pool_size
        self.alpha = nn.Parameter(torch.rand(1))
        self.linear = nn.Linear(channels * pool_size * pool_size, num_classes)

    def forward(self, x):
        mixed = self.alpha * F.adaptive_max_pool2d(x, self.pool_size) + (
            1 - self.alpha
        ) * F.adaptive_avg_pool2d(x, self.pool_size)
        return self.linear(mixed.flatten(1))


class ShallowDeepNet(nn.Module):
    def __init__(self, num_classes=NUM_CLASSES, threshold=0.9):
        super().__init__()
        self.threshold = threshold
        self.layers = nn.ModuleList(
            [conv_bn(3, 16, 1), conv_bn(16, 32, 2), conv_bn(32, 64, 2), conv_bn(64, 64, 2)]
        )
        self.exits = nn.ModuleList(
            [
                InternalClassifier(16, 4, num_classes),
                InternalClassifier(32, 4, num_classes),
                InternalClassifier(64, 2, num_classes),
            ]
        )
        self.end_layer = nn.Sequential(nn.AdaptiveAvgPool2d(1), nn.Flatten())
        self.final = nn.Linear(64, num_classes)

    def forward(self, x):
        for layer, exit_head in zip(self.layers, self.exits):
            x = layer(x)
            logits = exit_head(x)
            probs = F.softmax(logits, dim=1)
            if probs.max() > self.threshold:
                return logits
        x = self.layers[-1](x)
        return self.final(self.end_layer(x))


def build():
    torch.manual_seed(0)
    model = ShallowDeepNet().eval()
    _calibrate(model)
    return model, (torch.randn(1, 3, 32, 32),), None


inputs = _common.image_inputs


decision = _common.argmax_decision


def path(model, *args) -> tuple:
    """One entry per exit test evaluated: True where the model returned."""
    with torch.no_grad(), _common.recording(*model.exits) as calls:
        model(*args)
    return tuple(bool(F.softmax(logits, dim=1).max() > model.threshold) for _, logits in calls)


@torch.no_grad()
def _calibrate(model):
    threshold, model.threshold = model.threshold, 2.0  # no exit: record every head
    logits = [[] for _ in model.exits]
    with _common.recording(*model.exits) as calls:
        for (x,) in inputs(64, seed=1234):
            model(x)
    for i, out in calls:
        logits[i].append(out)
    model.threshold = threshold
    _common.calibrate_exits(
        [head.linear for head in model.exits],
        [torch.cat(z) for z in logits],
        lambda z: F.softmax(z, dim=1).amax(dim=1) > threshold,
        (0.3, 0.35, 0.4),
    )
