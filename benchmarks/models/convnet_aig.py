"""ConvNet-AIG (Veit & Belongie, ECCV 2018), the convnet-aig repository's gated `BasicBlock` at
inference: every residual block first computes a relevance score from its globally pooled input
(1x1 conv, bn, relu, 1x1 conv to 2 logits) and executes its residual branch only when the
"execute" logit wins (hard argmax; the Gumbel noise is a training-time device)."""

import torch
import torch.nn.functional as F
from torch import nn

from . import _common, _resnet

NAME = "convnet_aig"
DESCRIPTION = (
    "ConvNet-AIG: CIFAR ResNet whose 9 blocks each carry a gate (global pool -> 2-layer MLP -> "
    "2 logits); the residual branch runs only when argmax == 1, the shortcut always"
)


class GatedBlock(nn.Module):
    def __init__(self, cin, cout, stride=1):
        super().__init__()
        self.conv1 = _resnet.conv3x3(cin, cout, stride)
        self.bn1 = nn.BatchNorm2d(cout)
        self.conv2 = _resnet.conv3x3(cout, cout)
        self.bn2 = nn.BatchNorm2d(cout)
        self.shortcut = nn.Sequential()
        if stride != 1 or cin != cout:
            self.shortcut = nn.Sequential(
                nn.Conv2d(cin, cout, 1, stride=stride, bias=False), nn.BatchNorm2d(cout)
            )
        # gate
        self.fc1 = nn.Conv2d(cin, 16, kernel_size=1)
        self.fc1bn = nn.BatchNorm2d(16)
        self.fc2 = nn.Conv2d(16, 2, kernel_size=1)

    def forward(self, x):
        # compute the relevance score
        w = F.avg_pool2d(x, x.size(2))
        w = F.relu(self.fc1bn(self.fc1(w)))
        w = self.fc2(w).flatten(1)
        shortcut = self.shortcut(x)
        if w.argmax(dim=1).item() == 1:
            out = F.relu(self.bn1(self.conv1(x)))
            out = self.bn2(self.conv2(out))
            return F.relu(shortcut + out)
        return F.relu(shortcut)


class ConvNetAIG(nn.Module):
    def __init__(self, widths=(16, 32, 64), blocks_per_stage=3, num_classes=10):
        super().__init__()
        self.stem = _resnet.stem(widths[0])
        blocks, cin = [], widths[0]
        for s, width in enumerate(widths):
            for b in range(blocks_per_stage):
                blocks.append(GatedBlock(cin, width, 2 if (s > 0 and b == 0) else 1))
                cin = width
        self.blocks = nn.Sequential(*blocks)
        self.fc = nn.Linear(widths[-1], num_classes)

    def forward(self, x):
        x = self.blocks(self.stem(x))
        x = F.avg_pool2d(x, x.size(2)).flatten(1)
        return self.fc(x)


def build():
    torch.manual_seed(0)
    model = ConvNetAIG().eval()
    calibration = inputs(48, seed=1234)
    _common.calibrate_gates(
        model,
        [block.fc2 for block in model.blocks],
        calibration,
        value=lambda out: out[:, 1] - out[:, 0],
        index=1,
    )
    _common.center_classifier(model, model.fc, calibration)
    return model, (torch.randn(1, 3, 32, 32),), None


inputs = _common.image_inputs


decision = _common.argmax_decision


def path(model, *args) -> tuple:
    """One bool per block: whether its residual branch ran."""
    with torch.no_grad(), _common.recording(*(block.fc2 for block in model.blocks)) as calls:
        model(*args)
    return tuple(out.flatten(1).argmax(dim=1).item() == 1 for _, out in calls)
