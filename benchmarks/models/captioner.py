"""Show-and-Tell style image captioner (Vinyals et al., CVPR 2015; the usual tutorial/repository
`sample()` method): a CNN encodes the image, an LSTMCell decodes greedily, feeding back the
argmax token, until it emits END or reaches the maximum caption length."""

import torch
from torch import nn

from . import _common

NAME = "captioner"
DESCRIPTION = (
    "CNN encoder + LSTMCell greedy decoder: a Python loop appends the argmax token each step and "
    "breaks on END (max 12 tokens); returns the variable-length 1-D int64 token tensor"
)
VOCAB = 24
START, END = 1, 2
MAX_LEN = 12


class Captioner(nn.Module):
    def __init__(self, vocab=VOCAB, embed=16, feature=32, hidden=48, max_len=MAX_LEN):
        super().__init__()
        self.max_len = max_len
        self.encoder = nn.Sequential(
            nn.Conv2d(3, 16, 3, stride=2, padding=1),
            nn.ReLU(inplace=True),
            nn.Conv2d(16, 32, 3, stride=2, padding=1),
            nn.ReLU(inplace=True),
            nn.Conv2d(32, 32, 3, stride=2, padding=1),
            nn.ReLU(inplace=True),
            nn.AdaptiveAvgPool2d(1),
            nn.Flatten(),
            nn.Linear(32, feature),
            nn.BatchNorm1d(feature),
        )
        self.init_h = nn.Linear(feature, hidden)
        self.init_c = nn.Linear(feature, hidden)
        self.embed = nn.Embedding(vocab, embed)
        self.lstm = nn.LSTMCell(embed + feature, hidden)
        self.out = nn.Linear(hidden, vocab)

    def forward(self, image):
        feature = self.encoder(image)
        h, c = torch.tanh(self.init_h(feature)), self.init_c(feature)
        token = torch.full((image.size(0),), START, dtype=torch.long, device=image.device)
        tokens = []
        for _ in range(self.max_len):
            h, c = self.lstm(torch.cat([self.embed(token), feature], dim=1), (h, c))
            token = self.out(h).argmax(dim=1)
            tokens.append(token)
            if token.item() == END:
                break
        return torch.cat(tokens)


def build():
    torch.manual_seed(0)
    model = Captioner().eval()
    _calibrate(model, inputs(64, seed=1234))
    return model, (torch.randn(1, 3, 32, 32),), None


inputs = _common.image_inputs


def decision(output):
    return tuple(output.tolist())


def path(model, *args) -> tuple:
    """One bool per decoding step: whether the loop broke on END there."""
    with torch.no_grad(), _common.recording(model.out) as calls:
        model(*args)
    return tuple(logits.argmax(dim=1).item() == END for _, logits in calls)


@torch.no_grad()
def _calibrate(model, calibration):
    """Set the feature batch-norm statistics (random convs give near-identical pooled features),
    sharpen and spread the vocabulary, then raise END's bias until about 2/3 of captions end
    before the maximum length."""
    _common.set_batchnorm_stats(model, model.encoder[-1], calibration)
    out, never = model.out, -1e3
    out.weight *= 4.0
    out.bias[END] = never  # END never wins: record full-length decodes
    with _common.recording(out) as calls:
        for args in calibration:
            model(*args)
    logits = torch.stack([z[0] for _, z in calls]).reshape(len(calibration), MAX_LEN, -1)
    shift = logits.mean((0, 1))
    shift[END] = 0.0
    out.bias -= shift
    margins = _common.first_stop_margins(logits - shift, END, [MAX_LEN] * len(calibration))
    out.bias[END] = never + margins.quantile(0.65)
