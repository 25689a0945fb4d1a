"""CIFAR-style ResNet pieces shared by the gated ResNets of the suite (SkipNet, BlockDrop,
ConvNet-AIG) and the static control."""

from torch import nn


def conv3x3(cin, cout, stride=1):
    return nn.Conv2d(cin, cout, 3, stride=stride, padding=1, bias=False)


class BasicBlock(nn.Module):
    """conv-bn-relu-conv-bn plus shortcut (1x1 conv + bn when the shape changes), then relu."""

    def __init__(self, cin, cout, stride=1):
        super().__init__()
        self.conv1 = conv3x3(cin, cout, stride)
        self.bn1 = nn.BatchNorm2d(cout)
        self.conv2 = conv3x3(cout, cout)
        self.bn2 = nn.BatchNorm2d(cout)
        self.relu = nn.ReLU(inplace=True)
        self.downsample = None
        if stride != 1 or cin != cout:
            self.downsample = nn.Sequential(
                nn.Conv2d(cin, cout, 1, stride=stride, bias=False), nn.BatchNorm2d(cout)
            )

    def forward(self, x):
        residual = x if self.downsample is None else self.downsample(x)
        out = self.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        return self.relu(out + residual)


def stem(channels=16):
    return nn.Sequential(conv3x3(3, channels), nn.BatchNorm2d(channels), nn.ReLU(inplace=True))


def stage_blocks(widths=(16, 32, 64), blocks_per_stage=3):
    """The residual blocks of a CIFAR ResNet, flattened: stride 2 at the start of stages 2+."""
    blocks, cin = [], widths[0]
    for s, width in enumerate(widths):
        for b in range(blocks_per_stage):
            blocks.append(BasicBlock(cin, width, 2 if (s > 0 and b == 0) else 1))
            cin = width
    return nn.ModuleList(blocks)
