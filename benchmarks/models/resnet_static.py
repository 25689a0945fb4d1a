"""A small CIFAR ResNet (He et al., CVPR 2016) with no data-dependent control flow: the control
of the suite. Every input takes the same (single) path; the batch dim is dynamic."""

import torch
from torch import nn
from torch.export import Dim

from . import _common, _resnet

NAME = "resnet_static"
DESCRIPTION = (
    "Static CIFAR ResNet (9 basic blocks, dynamic batch): no data-dependent control flow; "
    "the control of the suite (exactly one path)"
)


class ResNet(nn.Module):
    def __init__(self, widths=(16, 32, 64), blocks_per_stage=3, num_classes=10):
        super().__init__()
        self.stem = _resnet.stem(widths[0])
        self.blocks = nn.Sequential(*_resnet.stage_blocks(widths, blocks_per_stage))
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.fc = nn.Linear(widths[-1], num_classes)

    def forward(self, x):
        x = self.blocks(self.stem(x))
        return self.fc(self.pool(x).flatten(1))


def build():
    torch.manual_seed(0)
    model = ResNet().eval()
    _common.center_classifier(model, model.fc, inputs(32, seed=1234))
    batch = Dim("batch", min=1, max=8)
    return model, (torch.randn(2, 3, 32, 32),), ({0: batch},)


def inputs(count: int = 100, seed: int = 0) -> list[tuple]:
    """Batches of 1..4 images."""
    gen = _common.generator(seed)
    out = []
    for _ in range(count):
        batch = int(torch.randint(1, 5, (), generator=gen))
        out.append((torch.cat(_common.images(gen, batch)),))
    return out


def decision(output):
    return tuple(output.argmax(dim=1).tolist())


def path(model, *args) -> tuple:
    """No data-dependent branch: always the empty path."""
    return ()
