"""Where in the user's source an op comes from: the `file:line` frames of its location.

torch.export locates an op by a call-site location whose outermost caller is the model's
own code; ops torch adds itself (runtime assertions, decompositions) may be located in
torch's files, which are passed over when the model's own are present.
"""

from __future__ import annotations

import importlib.util
import os
import re
from functools import cache

from iree.compiler import ir

_FILE_LINE = re.compile(r'"([^"]*)":(\d+):\d+')
_DYNC_ROOT = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "")


def source_span(ops: list[ir.Operation]) -> str:
    """`file:first-last` over the frames of `ops` that are in the first file seen, the model's
    own files before torch's (torch.export's runtime assertions are located in torch);
    "unknown" when none is located."""
    located = [frames for op in ops if (frames := _FILE_LINE.findall(str(op.location)))]
    if not located:
        return "unknown"
    # The outermost caller of a call-site location is the model's own source.
    outermost = [frames[-1][0] for frames in located]
    first_file = next((path for path in outermost if not _in_torch(path)), outermost[0])
    lines = [int(line) for frames in located for path, line in frames if path == first_file]
    return f"{first_file}:{min(lines)}-{max(lines)}"


def made_by(op: ir.Operation, relative_path: str) -> bool:
    """Whether `op` was made by dync's own code in `relative_path` (inside the `dync`
    package, e.g. a rewritten loop's helpers): its innermost frame outside torch is there."""
    frames = [path for path, _ in _FILE_LINE.findall(str(op.location)) if not _in_torch(path)]
    return bool(frames) and frames[0] == os.path.join(_DYNC_ROOT, relative_path)


def source_line(op: ir.Operation) -> str | None:
    """`file:line` of the innermost frame of `op`'s location in the user's code (the line
    that made it: not torch's, nor dync's own, such as a rewritten loop's helpers), None
    when it has none."""
    frames = [(path, line) for path, line in _FILE_LINE.findall(str(op.location))
              if not _in_torch(path) and not path.startswith(_DYNC_ROOT)]
    return f"{frames[0][0]}:{frames[0][1]}" if frames else None


_NAME = re.compile(r'^loc\("([^"]*)"')


def where_in_model(op: ir.Operation) -> str | None:
    """Where `op` comes from in the user's model: its `file:line` (`source_line`), else its
    ONNX node (``node 'name'``), else None."""
    name = location_name(op)
    return source_line(op) or (f"node {name!r}" if name else None)


def location_name(op: ir.Operation) -> str | None:
    """The name of `op`'s location if it is a name (the ONNX importer names each op by its
    node), else None."""
    match = _NAME.match(str(op.location))
    return match.group(1) if match and not _FILE_LINE.match(str(op.location), 4) else None


def _in_torch(path: str) -> bool:
    """Whether `path` is one of torch's files (torch.export writes some relative to it)."""
    return path.startswith("torch/") or any(path.startswith(root) for root in _torch_roots())


@cache
def _torch_roots() -> tuple[str, ...]:
    """Where torch is installed (found without importing it)."""
    spec = importlib.util.find_spec("torch")
    return tuple(os.path.join(p, "") for p in spec.submodule_search_locations or ()) if spec else ()
