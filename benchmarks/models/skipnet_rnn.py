"""SkipNet with a recurrent gate (Wang et al., ECCV 2018), SkipNet repository's
`ResNetRecurrentGateSP` at inference: one LSTM gate shared by all residual blocks reads a pooled
projection of the current features and decides whether the next block runs."""

import torch
from torch import nn

from . import _common, _resnet

NAME = "skipnet_rnn"
DESCRIPTION = (
    "SkipNet-RNN: CIFAR ResNet (9 blocks) with one LSTMCell gate shared across blocks; "
    "each of 8 blocks runs only if the gate prob > 0.5 (hidden state carried block to block)"
)
EMBED = 10
HIDDEN = 10


class RNNGate(nn.Module):
    """SkipNet's `RNNGatePolicy`: LSTM over per-block gate features, 1x1 projection, sigmoid."""

    def __init__(self, input_dim=EMBED, hidden_dim=HIDDEN):
        super().__init__()
        self.hidden_dim = hidden_dim
        self.rnn = nn.LSTMCell(input_dim, hidden_dim)
        self.proj = nn.Linear(hidden_dim, 1)

    def init_hidden(self, x):
        zeros = x.new_zeros(x.size(0), self.hidden_dim)
        return zeros, zeros

    def forward(self, x, hidden):
        h, c = self.rnn(x, hidden)
        return torch.sigmoid(self.proj(h)), (h, c)


class SkipNetRNN(nn.Module):
    def __init__(self, widths=(16, 32, 64), blocks_per_stage=3, num_classes=10):
        super().__init__()
        self.stem = _resnet.stem(widths[0])
        self.blocks = _resnet.stage_blocks(widths, blocks_per_stage)
        # per-block gate features (avg pool + 1x1 conv to the LSTM's input size), one shared LSTM
        self.gate_layers = nn.ModuleList(
            nn.Sequential(nn.AdaptiveAvgPool2d(1), nn.Conv2d(b.bn2.num_features, EMBED, 1))
            for b in self.blocks[:-1]
        )
        self.control = RNNGate()
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.fc = nn.Linear(widths[-1], num_classes)

    def forward(self, x):
        hidden = self.control.init_hidden(x)
        x = self.stem(x)
        x = self.blocks[0](x)
        for block, gate_layer in zip(self.blocks[1:], self.gate_layers):
            prob, hidden = self.control(gate_layer(x).flatten(1), hidden)
            if prob.item() > 0.5:
                x = block(x)
            elif block.downsample is not None:
                x = block.downsample(x)
        return self.fc(self.pool(x).flatten(1))


def build():
    torch.manual_seed(0)
    model = SkipNetRNN().eval()
    _calibrate(model, inputs(48, seed=1234))
    return model, (torch.randn(1, 3, 32, 32),), None


inputs = _common.image_inputs


decision = _common.argmax_decision


def path(model, *args) -> tuple:
    """One bool per gate step: whether its block ran."""
    with torch.no_grad(), _common.recording(model.control) as calls:
        model(*args)
    return tuple(prob.item() > 0.5 for _, (prob, _hidden) in calls)


@torch.no_grad()
def _calibrate(model, calibration):
    """Center each block's gate features, then the shared projection's logit."""
    for gate_layer in model.gate_layers:
        conv = gate_layer[1]
        with _common.recording(conv) as calls:
            for args in calibration:
                model(*args)
        conv.bias -= torch.cat([out.flatten(1) for _, out in calls]).median(0).values
    _common.calibrate_gates(model, [model.control.proj], calibration)
    _common.center_classifier(model, model.fc, calibration)
