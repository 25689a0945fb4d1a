"""The exceptions dync raises. Every user-facing failure is one of these, never a bare crash."""

from __future__ import annotations


class DyncError(Exception):
    """Base class of all dync errors."""


class UnsupportedConstructError(DyncError):
    """A construct in the user's model that dync cannot compile (yet).

    `source` is "file:line" of the user's code when it is known.
    """

    def __init__(self, construct: str, reason: str, source: str | None = None):
        self.construct = construct
        self.reason = reason
        self.source = source
        where = f" at {source}" if source else ""
        super().__init__(f"unsupported construct {construct!r}{where}: {reason}")


class CompilationError(DyncError):
    """IREE (or an MLIR pass) rejected the program. `diagnostics` holds the compiler's messages."""

    def __init__(self, message: str, diagnostics: list[str] | None = None):
        self.diagnostics = list(diagnostics or [])
        text = message
        if self.diagnostics:
            text += "\n" + "\n".join(self.diagnostics[:20])
        super().__init__(text)


class OptionError(DyncError, ValueError):
    """`dync.compile` was called with options that cannot apply to this model (a mode, a
    dim name, a size outside its range): the caller's mistake, never a reason to fall back."""


class FlagError(CompilationError, OptionError):
    """IREE refused a compiler flag of the call's (`extra_flags`, `--iree-flag`): a mistake
    in the call, not in the program, so `mode="auto"` does not fall back past it."""


class InputError(DyncError, ValueError):
    """Arguments passed to a compiled module do not match its signature."""


class OutsideCompiledRange(InputError):
    """A dynamic dim's size lies in its declared range but outside the part of it the module
    was compiled for (the trace holds only there: `SymbolSpec.declared`). Under
    `mode="auto"` the call runs in eager PyTorch instead."""


class ModuleRunError(DyncError):
    """A compiled module failed at run time in IREE (not a check compiled into it: those raise
    `IndexOutOfRangeError` or `IntegerDivisionByZeroError`). Under `mode="auto"` the call
    runs in eager PyTorch instead (`CompiledModule.fallback`)."""


class TraceAssumptionError(ModuleRunError):
    """A compiled module stopped at one of torch.export's own run-time asserts: the inputs
    break something the trace assumed of a data-dependent size (a `torch._check` in the
    model, or one dync's rewriting adds where eager raises, as for `torch.stack` of an empty
    list). Under `mode="auto"` the call runs in eager PyTorch, which computes what those
    inputs do or raises as it would anyway; no warning, as this is no IREE failure."""


# The message of those asserts, as torch.export writes it.
TRACE_ASSERT = "Runtime assertion failed for expression"


class ModuleFormatError(DyncError):
    """A saved `.vmfb` or its manifest is missing, corrupted or from an incompatible dync."""


# The message of every index check `dync-check-indices` compiles into a module starts with
# this; the runtime turns IREE's failure carrying it into an `IndexOutOfRangeError`.
INDEX_CHECK = "dync index check:"


class IndexOutOfRangeError(DyncError, IndexError):
    """A compiled module read an index outside its table (an embedding id, a gather or
    scatter index...), where eager PyTorch raises too; the message names the op and the
    line of the model that made it."""


# Likewise for the zero-divisor checks of `dync-int-division`: `IntegerDivisionByZeroError`.
DIVISION_CHECK = "dync division check:"


class IntegerDivisionByZeroError(DyncError, ZeroDivisionError):
    """A compiled module divided an integer tensor by zero (`//`, `%`, `torch.div` with a
    rounding mode), where eager PyTorch raises too; the message names the op and the line of
    the model."""


class PassFailure(Exception):
    """Raised by a pass's `run` (or an analysis it calls) to fail the pipeline with a message."""
