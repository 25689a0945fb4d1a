"""YOLO-style one-stage detector (Redmon & Farhadi; the YOLOv3/v5 `detect` + `non_max_suppression`
pipeline, tiny): a stride-32 CNN on an image of any size (multiple of 32), box decoding against
the grid and anchors, a confidence-threshold filter, then greedy NMS written as a plain `while`
loop over the remaining boxes. Returns a variable number of detections (K, 6):
x1, y1, x2, y2, score, class, with the corners relative to the image size (0..1), as darknet's
region layer and YOLOv5's `xyxyn` report them."""

import torch
from torch import nn
from torch.export import Dim

from . import _common

NAME = "yolo_nms"
DESCRIPTION = (
    "Tiny YOLO detector on a variable-size image (dynamic H/W, multiples of 32): decode, "
    "confidence filter (maybe no box), greedy NMS as a Python while loop; returns K boxes"
)
NUM_CLASSES = 3
STRIDE = 32
# Image sides pad up to the next multiple of 64 px from 128 (dync-bucket): 16 static versions
# of `detect`'s CNN instead of one over a dynamic H x W.
COMPILE_OPTIONS = {"buckets": {"h32": [4, 6, 8, 10], "w32": [4, 6, 8, 10]}}


def conv_bn(cin, cout, stride):
    return nn.Sequential(
        nn.Conv2d(cin, cout, 3, stride=stride, padding=1, bias=False),
        nn.BatchNorm2d(cout),
        nn.LeakyReLU(0.1, inplace=True),
    )


def box_iou(box, boxes):
    """IoU of one (4,) box with (M, 4) boxes, x1y1x2y2."""
    lt = torch.maximum(box[:2], boxes[:, :2])
    rb = torch.minimum(box[2:], boxes[:, 2:])
    inter = (rb - lt).clamp(min=0).prod(dim=1)
    area = (box[2:] - box[:2]).prod()
    areas = (boxes[:, 2:] - boxes[:, :2]).prod(dim=1)
    return inter / (area + areas - inter)


class TinyYolo(nn.Module):
    def __init__(self, conf_threshold=0.25, iou_threshold=0.45, max_nms=32):
        super().__init__()
        self.conf_threshold = conf_threshold
        self.iou_threshold = iou_threshold
        self.max_nms = max_nms
        self.backbone = nn.Sequential(
            conv_bn(3, 8, 2),
            conv_bn(8, 16, 2),
            conv_bn(16, 32, 2),
            conv_bn(32, 48, 2),
            conv_bn(48, 64, 2),
        )
        self.register_buffer("anchors", torch.tensor([[24.0, 32.0], [56.0, 48.0]]))
        self.num_anchors = len(self.anchors)
        self.head = nn.Conv2d(64, self.num_anchors * (5 + NUM_CLASSES), 1)

    def decode(self, p):
        """Raw head output (1, A*(5+C), gh, gw) -> boxes (N, 4), scores (N,), labels (N,)."""
        b, _, gh, gw = p.shape
        p = p.view(b, self.num_anchors, 5 + NUM_CLASSES, gh, gw).permute(0, 1, 3, 4, 2)
        gy, gx = torch.meshgrid(torch.arange(gh, device=p.device), torch.arange(gw, device=p.device),
                                indexing="ij")
        grid = torch.stack([gx, gy], dim=-1).float()
        xy = (torch.sigmoid(p[..., :2]) + grid) * STRIDE
        wh = torch.exp(p[..., 2:4].clamp(max=4.0)) * self.anchors.view(1, -1, 1, 1, 2)
        conf = torch.sigmoid(p[..., 4:5]) * torch.sigmoid(p[..., 5:])
        scores, labels = conf.max(dim=-1)
        boxes = torch.cat([xy - wh / 2, xy + wh / 2], dim=-1)
        return boxes.reshape(-1, 4), scores.reshape(-1), labels.reshape(-1)

    def detect(self, image):
        """All boxes, in image-relative corners clipped to the image, with their scores and
        labels. IoU, hence NMS, is the same in pixels and in relative units."""
        boxes, scores, labels = self.decode(self.head(self.backbone(image)))
        h, w = image.size(2), image.size(3)
        x1, y1, x2, y2 = boxes.unbind(1)
        boxes = torch.stack([x1 / w, y1 / h, x2 / w, y2 / h], 1).clamp(0, 1)
        return boxes, scores, labels

    def forward(self, image):
        boxes, scores, labels = self.detect(image)
        candidates = scores > self.conf_threshold
        if not candidates.any():
            return image.new_zeros(0, 6)
        boxes, scores, labels = boxes[candidates], scores[candidates], labels[candidates]
        order = scores.argsort(descending=True)
        if order.numel() > self.max_nms:
            order = order[: self.max_nms]
        keep = []
        while order.numel() > 0:
            i = order[0]
            keep.append(i)
            if order.numel() == 1:
                break
            ious = box_iou(boxes[i], boxes[order[1:]])
            order = order[1:][ious <= self.iou_threshold]
        keep = torch.stack(keep)
        return torch.cat([boxes[keep], scores[keep, None], labels[keep, None].float()], dim=1)


def build():
    torch.manual_seed(0)
    model = TinyYolo().eval()
    _calibrate(model, inputs(64, seed=1234))
    h, w = Dim("h32", min=2, max=10), Dim("w32", min=2, max=10)
    return model, (torch.randn(1, 3, 4 * STRIDE, 5 * STRIDE),), ({2: STRIDE * h, 3: STRIDE * w},)


def inputs(count: int = 100, seed: int = 0) -> list[tuple]:
    """Images of 64..320 pixels a side (multiples of 32), independently in H and W."""
    gen = _common.generator(seed)
    out = []
    for _ in range(count):
        h, w = (int(v) * STRIDE for v in torch.randint(2, 11, (2,), generator=gen))
        out.append((_common.image(gen, h, w),))
    return out


def decision(output):
    """Per detection: class and box corners rounded to 1/256 of the image side."""
    return tuple((int(row[5]), *(round(float(v) * 256) for v in row[:4])) for row in output)


def path(model, image) -> tuple:
    """The forward's branch conditions in evaluation order: no candidate?, capped to max_nms?,
    then per NMS loop test: boxes remain? (while), only one left? (break). Evaluated on the
    model's own `detect` output with the forward's filter and loop."""
    with torch.no_grad():
        boxes, scores, _ = model.detect(image)
        candidates = scores > model.conf_threshold
        if not candidates.any():
            return (True,)
        boxes, scores = boxes[candidates], scores[candidates]
        order = scores.argsort(descending=True)
        decisions = [False, bool(order.numel() > model.max_nms)]
        order = order[: model.max_nms]
        while True:
            decisions.append(order.numel() > 0)
            if not decisions[-1]:
                break
            decisions.append(order.numel() == 1)
            if decisions[-1]:
                break
            ious = box_iou(boxes[order[0]], boxes[order[1:]])
            order = order[1:][ious <= model.iou_threshold]
    return tuple(decisions)


@torch.no_grad()
def _calibrate(model, calibration):
    """Standardize every head output (random weights give scores bunched within 1e-3 of each
    other, where any rounding reorders them), then shift the objectness biases until about 30%
    of the images have no box above the confidence threshold."""
    raw = torch.cat([model.head(model.backbone(*args)).flatten(2) for args in calibration], 2)
    mean, std = raw.mean((0, 2)), raw.std((0, 2))
    # target spread per output: x, y, w, h, objectness, classes
    spread = torch.tensor([1.0, 1.0, 0.5, 0.5, 2.0] + [2.0] * NUM_CLASSES).repeat(model.num_anchors)
    scale = spread / std
    model.head.weight *= scale[:, None, None, None]
    model.head.bias.copy_((model.head.bias - mean) * scale)
    raw = [model.head(model.backbone(*args)) for args in calibration]
    obj = [a * (5 + NUM_CLASSES) + 4 for a in range(model.num_anchors)]

    def fraction_with_boxes(shift):
        found = 0
        for p in raw:
            p = p.clone()
            p[:, obj] += shift
            found += bool(model.decode(p)[1].max() > model.conf_threshold)
        return found / len(raw)

    model.head.bias[obj] += _common.bisect(fraction_with_boxes, -20.0, 20.0, 0.7)
