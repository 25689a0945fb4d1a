"""dync: compile dynamic neural networks to IREE modules for CUDA, ARM and the host CPU."""

__version__ = "0.1.0"

from .api import compile  # noqa: E402
from .errors import (  # noqa: E402
    CompilationError,
    DyncError,
    InputError,
    ModuleFormatError,
    UnsupportedConstructError,
)
from .runtime import CompiledModule, HostModule, load  # noqa: E402
from .verify import Verification, verify  # noqa: E402

__all__ = [
    "CompilationError",
    "CompiledModule",
    "DyncError",
    "HostModule",
    "InputError",
    "ModuleFormatError",
    "UnsupportedConstructError",
    "Verification",
    "__version__",
    "compile",
    "load",
    "verify",
]
