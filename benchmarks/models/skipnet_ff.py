"""SkipNet with feed-forward gates (Wang et al., ECCV 2018), SkipNet repository's
`ResNetFeedForwardSP` at inference: after each residual block a small gate (3x3 conv, pooling,
linear) decides whether the next block runs; a skipped block only applies its shortcut."""

import torch
from torch import nn

from . import _common, _resnet

NAME = "skipnet_ff"
DESCRIPTION = (
    "SkipNet-FF: CIFAR ResNet (9 blocks) with a per-block feed-forward gate "
    "(conv+pool+linear); each of 8 blocks runs only if its gate prob > 0.5"
)


class FeedforwardGate(nn.Module):
    """SkipNet's `FeedforwardGateII`: one stride-2 conv, global average pool, linear -> prob."""

    def __init__(self, channels):
        super().__init__()
        self.conv = _resnet.conv3x3(channels, channels, stride=2)
        self.bn = nn.BatchNorm2d(channels)
        self.relu = nn.ReLU(inplace=True)
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.linear = nn.Linear(channels, 1)

    def forward(self, x):
        x = self.pool(self.relu(self.bn(self.conv(x)))).flatten(1)
        return torch.sigmoid(self.linear(x))


class SkipNetFF(nn.Module):
    def __init__(self, widths=(16, 32, 64), blocks_per_stage=3, num_classes=10):
        super().__init__()
        self.stem = _resnet.stem(widths[0])
        self.blocks = _resnet.stage_blocks(widths, blocks_per_stage)
        # gate i looks at the output of block i and decides block i + 1
        self.gates = nn.ModuleList(FeedforwardGate(b.bn2.num_features) for b in self.blocks[:-1])
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.fc = nn.Linear(widths[-1], num_classes)

    def forward(self, x):
        x = self.stem(x)
        x = self.blocks[0](x)
        for block, gate in zip(self.blocks[1:], self.gates):
            if gate(x).item() > 0.5:
                x = block(x)
            elif block.downsample is not None:
                x = block.downsample(x)
        return self.fc(self.pool(x).flatten(1))


def build():
    torch.manual_seed(0)
    model = SkipNetFF().eval()
    calibration = inputs(48, seed=1234)
    _common.calibrate_gates(model, [g.linear for g in model.gates], calibration)
    _common.center_classifier(model, model.fc, calibration)
    return model, (torch.randn(1, 3, 32, 32),), None


inputs = _common.image_inputs


decision = _common.argmax_decision


def path(model, *args) -> tuple:
    """One bool per gate: whether its block ran."""
    with torch.no_grad(), _common.recording(*model.gates) as calls:
        model(*args)
    return tuple(prob.item() > 0.5 for _, prob in calls)
