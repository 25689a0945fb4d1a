"""dync: compile dynamic neural networks to IREE modules for CUDA, ARM and the host CPU."""

from .errors import (
    CompilationError,
    DyncError,
    IndexOutOfRangeError,
    InputError,
    IntegerDivisionByZeroError,
    ModuleFormatError,
    ModuleRunError,
    OptionError,
    OutsideCompiledRange,
    TraceAssumptionError,
    UnsupportedConstructError,
)
from .runtime import CompiledModule, HostModule, load
from .version import __version__

__all__ = [
    "CompilationError",
    "CompiledModule",
    "DyncError",
    "HostModule",
    "IndexOutOfRangeError",
    "IntegerDivisionByZeroError",
    "InputError",
    "ModuleFormatError",
    "ModuleRunError",
    "OptionError",
    "OutsideCompiledRange",
    "TraceAssumptionError",
    "UnsupportedConstructError",
    "Verification",
    "__version__",
    "compile",
    "load",
    "verify",
]


# The `compile` extra's packages (pyproject.toml): a runtime-only install has none of them.
_COMPILE_SIDE = ("torch", "onnx", "iree.compiler")


def __getattr__(name: str):
    # `compile` needs iree-base-compiler (and torch for PyTorch models), `verify` torch;
    # loading and running a saved module needs only iree-base-runtime and numpy, so a
    # deployment machine can `dync.load` without the compiler or torch.
    if name in ("verify", "Verification"):
        from . import differential as module

        globals().update(verify=module.verify, Verification=module.Verification)
        return globals()[name]
    if name == "compile":
        try:
            from .api import compile
        except ModuleNotFoundError as e:
            missing = e.name or ""
            if not any(missing == m or missing.startswith(m + ".") for m in _COMPILE_SIDE):
                raise
            raise ImportError(
                f"dync.compile needs the compiler side, which this installation lacks (no module "
                f"{e.name!r}): pip install 'dync[compile]' (torch, iree-base-compiler, onnx); "
                "dync.load and running a saved module need only the runtime") from e

        globals()["compile"] = compile
        return compile
    raise AttributeError(f"module 'dync' has no attribute {name!r}")
