"""Locating the user's source line for a node, an exception or a traceback."""

from __future__ import annotations

import os
import re
import traceback
from types import TracebackType

import torch

_FRAME = re.compile(r'File "([^"]+)", line ([0-9]+)')
# An MLIR location's frame, as IREE's diagnostics print it: "file":line:column.
_MLIR_FRAME = re.compile(r'"([^"]+)":([0-9]+):[0-9]+')
# The op a diagnostic is about: 'torch.aten.x' op ..., or a torch.operator named torch.aten.x.
_OP = re.compile(r"""(?:'|name = ")(torch\.aten\.[\w.]+|torch\.prim\.[\w.]+)""")
_LIBRARY_ROOTS = tuple(
    os.path.dirname(p) + os.sep
    for p in (torch.__file__, os.path.dirname(__file__), os.path.dirname(os.__file__))
)
# dync's own package root: frames inside it are not the user's.
_DYNC_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))) + os.sep


def is_user_file(filename: str) -> bool:
    path = os.path.abspath(filename)
    if path.startswith(_DYNC_ROOT + "dync" + os.sep) or "site-packages" in path:
        return False
    return not path.startswith(_LIBRARY_ROOTS) and not filename.startswith("<")


def user_frame_from_stack_trace(stack_trace: str | None) -> str | None:
    """The innermost user frame ("file:line") of an FX node's `stack_trace`."""
    if not stack_trace:
        return None
    frames = [(f, int(n)) for f, n in _FRAME.findall(stack_trace) if is_user_file(f)]
    return f"{frames[-1][0]}:{frames[-1][1]}" if frames else None


def user_frame_from_traceback(tb: TracebackType | None) -> str | None:
    """The innermost user frame of an exception raised while tracing the user's code."""
    frames = [f for f in traceback.extract_tb(tb) if is_user_file(f.filename)]
    return f"{frames[-1].filename}:{frames[-1].lineno}" if frames else None


def user_frame_here() -> str | None:
    """The innermost user frame of the current call stack (an op dync refuses while tracing)."""
    frames = [f for f in traceback.extract_stack() if is_user_file(f.filename)]
    return f"{frames[-1].filename}:{frames[-1].lineno}" if frames else None


def user_frame_from_message(message: str) -> str | None:
    """torch.export errors quote the user's frame in their text; take the innermost one."""
    return user_frame_from_stack_trace(message)


def source_line(location: str | None) -> str:
    """The text of `file:line`, for error messages."""
    if not location:
        return ""
    filename, _, line = location.rpartition(":")
    try:
        with open(filename, encoding="utf-8") as f:
            return f.read().splitlines()[int(line) - 1].strip()
    except (OSError, IndexError, ValueError):
        return ""


def user_source_in(text: str) -> str | None:
    """The first frame of the user's code a compiler's message names (an MLIR location,
    innermost first, or a Python traceback, innermost last), as "file:line"."""
    for path, line in _MLIR_FRAME.findall(text):
        if is_user_file(path):
            return f"{path}:{line}"
    return user_frame_from_stack_trace(text)


def op_in(text: str) -> str | None:
    """The torch op a compiler's message is about ("aten.native_batch_norm"), if it names one."""
    match = _OP.search(text)
    return match.group(1).removeprefix("torch.") if match else None
