"""An early-exit ResNet-50 at ImageNet size (not in the suite; `python -m benchmarks
realistic` uses it): torchvision's ResNet-50 layout (7x7 stem, bottleneck blocks 3-4-6-3,
widths 64-128-256-512 x4) written out here, with a classifier after each of the first three
stages as in BranchyNet / SDN: the batch leaves at a stage when every sample's top softmax
probability there reaches `threshold`. A threshold above 1 never exits (the longest path), one
of 0 always exits at the first classifier."""

import torch
from torch import nn


class Bottleneck(nn.Module):
    """1x1 reduce, 3x3 (carrying the stride), 1x1 expand x4, each with BN; projection
    shortcut when the shape changes; ReLU after the sum."""

    expansion = 4

    def __init__(self, cin: int, width: int, stride: int = 1):
        super().__init__()
        cout = width * self.expansion
        self.conv1 = nn.Conv2d(cin, width, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(width)
        self.conv2 = nn.Conv2d(width, width, 3, stride=stride, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(width)
        self.conv3 = nn.Conv2d(width, cout, 1, bias=False)
        self.bn3 = nn.BatchNorm2d(cout)
        self.relu = nn.ReLU(inplace=True)
        self.downsample = None
        if stride != 1 or cin != cout:
            self.downsample = nn.Sequential(nn.Conv2d(cin, cout, 1, stride=stride, bias=False),
                                            nn.BatchNorm2d(cout))

    def forward(self, x):
        identity = x if self.downsample is None else self.downsample(x)
        out = self.relu(self.bn1(self.conv1(x)))
        out = self.relu(self.bn2(self.conv2(out)))
        out = self.bn3(self.conv3(out))
        return self.relu(out + identity)


def _stage(cin: int, width: int, blocks: int, stride: int) -> nn.Sequential:
    layers = [Bottleneck(cin, width, stride)]
    layers += [Bottleneck(width * 4, width) for _ in range(blocks - 1)]
    return nn.Sequential(*layers)


class EarlyExitResNet50(nn.Module):
    def __init__(self, num_classes: int = 1000, threshold: float = 2.0):
        super().__init__()
        self.threshold = threshold
        self.stem = nn.Sequential(nn.Conv2d(3, 64, 7, stride=2, padding=3, bias=False),
                                  nn.BatchNorm2d(64), nn.ReLU(inplace=True),
                                  nn.MaxPool2d(3, stride=2, padding=1))
        self.stages = nn.ModuleList([_stage(64, 64, 3, 1), _stage(256, 128, 4, 2),
                                     _stage(512, 256, 6, 2), _stage(1024, 512, 3, 2)])
        self.exits = nn.ModuleList([nn.Linear(c, num_classes) for c in (256, 512, 1024)])
        self.fc = nn.Linear(2048, num_classes)

    def forward(self, x):
        x = self.stem(x)
        for stage, head in zip(self.stages[:-1], self.exits):
            x = stage(x)
            logits = head(torch.flatten(nn.functional.adaptive_avg_pool2d(x, 1), 1))
            if logits.softmax(-1).amax(-1).min() >= self.threshold:
                return logits
        x = self.stages[-1](x)
        return self.fc(torch.flatten(nn.functional.adaptive_avg_pool2d(x, 1), 1))
