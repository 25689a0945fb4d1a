"""BlockDrop (Wu et al., CVPR 2018), the BlockDrop repository's `FlatResNet.forward_single` at
inference: a small policy network looks at a downsampled image and predicts, in one shot, a
binary keep/drop decision for every residual block of a ResNet; the ResNet then runs the kept
blocks only (a block dropped for the whole batch is skipped outright)."""

import torch
import torch.nn.functional as F
from torch import nn
from torch.export import Dim

from . import _common, _resnet

NAME = "blockdrop"
DESCRIPTION = (
    "BlockDrop: a policy CNN predicts a keep-mask (sigmoid > 0.5) over the 9 blocks of a CIFAR "
    "ResNet in one shot; a block is skipped when no sample in the batch keeps it"
)
# Most requests are single images (`inputs`): a static batch-1 version beside the dynamic
# fallback (dync-specialize), whose convolutions read their padding in place (dync-fuse-padding).
COMPILE_OPTIONS = {"specialize": {"batch": [1]}}


class PolicyNet(nn.Module):
    def __init__(self, num_blocks):
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(3, 8, 3, stride=2, padding=1),
            nn.ReLU(inplace=True),
            nn.Conv2d(8, 16, 3, stride=2, padding=1),
            nn.ReLU(inplace=True),
            nn.AdaptiveAvgPool2d(1),
            nn.Flatten(),
        )
        self.logit = nn.Linear(16, num_blocks)

    def forward(self, x):
        return torch.sigmoid(self.logit(self.features(x)))


class BlockDrop(nn.Module):
    def __init__(self, widths=(16, 32, 64), blocks_per_stage=3, num_classes=10):
        super().__init__()
        self.agent = PolicyNet(len(widths) * blocks_per_stage)
        self.stem = _resnet.stem(widths[0])
        self.blocks = _resnet.stage_blocks(widths, blocks_per_stage)
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.fc = nn.Linear(widths[-1], num_classes)

    def forward(self, x):
        probs = self.agent(F.avg_pool2d(x, 2))
        policy = (probs > 0.5).float()
        x = self.stem(x)
        for i, block in enumerate(self.blocks):
            action = policy[:, i]
            residual = x if block.downsample is None else block.downsample(x)
            # early termination if all actions in the batch are zero
            if action.sum() == 0:
                x = residual
                continue
            mask = action.view(-1, 1, 1, 1)
            x = block(x) * mask + residual * (1 - mask)
        return self.fc(self.pool(x).flatten(1))


def build():
    torch.manual_seed(0)
    model = BlockDrop().eval()
    calibration = inputs(64, seed=1234, max_batch=1)
    with torch.no_grad(), _common.recording(model.agent.logit) as calls:
        for args in calibration:
            model(*args)
    logits = torch.cat([out for _, out in calls])
    for i in range(logits.shape[1]):
        _common.center_bias(model.agent.logit, logits[:, i], i)
    _common.center_classifier(model, model.fc, calibration)
    batch = Dim("batch", min=1, max=8)
    return model, (torch.randn(2, 3, 32, 32),), ({0: batch},)


def inputs(count: int = 100, seed: int = 0, max_batch: int = 3) -> list[tuple]:
    """Mostly single images (70%), some batches of 2 and 3."""
    gen = _common.generator(seed)
    out = []
    for _ in range(count):
        r = torch.rand((), generator=gen).item()
        batch = 1 if r < 0.7 else 2 if r < 0.9 else 3
        batch = min(batch, max_batch)
        out.append((torch.cat(_common.images(gen, batch)),))
    return out


def decision(output):
    return tuple(output.argmax(dim=1).tolist())


def path(model, *args) -> tuple:
    """One bool per block: whether it ran (some sample in the batch kept it)."""
    with torch.no_grad(), _common.recording(model.agent) as calls:
        model(*args)
    ((_, probs),) = calls
    policy = (probs > 0.5).float()
    return tuple(bool(policy[:, i].sum() != 0) for i in range(policy.shape[1]))
