"""A two-exit classifier: stop at the first head when it is confident, else run deeper.

The exit decision depends on the input's values, so a tracing compiler freezes one path and
`torch.export` refuses the `if`; dync rewrites the `forward` as it is and compiles both exits
into one module.
"""

import torch
from torch import nn
from torch.export import Dim


class EarlyExitNet(nn.Module):
    def __init__(self, threshold: float = 0.5, classes: int = 10):
        super().__init__()
        self.threshold = threshold
        self.stem = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.ReLU(), nn.AdaptiveAvgPool2d(4))
        self.exit1 = nn.Linear(8 * 16, classes)
        self.deep = nn.Sequential(nn.Linear(8 * 16, 64), nn.ReLU(), nn.Linear(64, 64), nn.ReLU())
        self.exit2 = nn.Linear(64, classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = self.stem(x).flatten(1)
        logits = self.exit1(h)
        if (logits.softmax(-1).amax(-1) > self.threshold).all():
            return logits
        return self.exit2(self.deep(h))


def build():
    """Factory for `dync compile examples/early_exit.py:build`: (model, example_args, dynamic_shapes)."""
    torch.manual_seed(0)
    model = EarlyExitNet().eval()
    with torch.no_grad():  # scale the first head so that confidence depends on the input
        model.exit1.weight.mul_(8.0)
    batch = Dim("batch", min=1, max=32)
    return model, (torch.randn(2, 3, 16, 16),), ({0: batch},)
