"""The benchmark suite of dynamic neural networks, one module per model.

Each model module exposes `NAME`, `DESCRIPTION`, `build() -> (model, example_args,
dynamic_shapes)` (torch.export conventions), `inputs(count, seed) -> [args, ...]` (together taking
every path of the model), `decision(output)` (a hashable final decision) and
`path(model, *args)` (the branch decisions eager execution takes). The models are written the way
their public code is: plain PyTorch `forward`s with Python control flow on tensor values. A
module may also set `COMPILE_OPTIONS`: the `dync.compile` options its deployment would choose
(e.g. yolo_nms's image-size buckets), used wherever the suite compiles it with dync.
"""

import importlib
from types import ModuleType

SUITE: tuple[str, ...] = (
    "shallow_deep",
    "skipnet_rnn",
    "skipnet_ff",
    "blockdrop",
    "convnet_aig",
    "ranet",
    "captioner",
    "nmt_decoder",
    "early_exit_bert",
    "moe",
    "tree_lstm",
    "yolo_nms",
    "resnet_static",
)


def load(name: str) -> ModuleType:
    """The suite module `name` (one of `SUITE`)."""
    if name not in SUITE:
        raise KeyError(f"unknown benchmark model {name!r}; the suite has {', '.join(SUITE)}")
    return importlib.import_module(f"{__name__}.{name}")


def compile_options(module: ModuleType) -> dict:
    """The `dync.compile` options a suite module asks for (`COMPILE_OPTIONS`, default none)."""
    return dict(getattr(module, "COMPILE_OPTIONS", {}))
