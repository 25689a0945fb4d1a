"""Reading `dync-plan-buffers`' prediction back: the ``dync.peak`` record as a `Peak`, evaluated
for a call's arguments.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

import sympy
from iree.compiler import ir

from ...dialects import dync_ir
from ...dialects.attributes import PEAK_ATTR
from ...dialects.symbolic import is_symbol_name, parse_dim


@dataclass(frozen=True)
class Peak:
    """The predicted peak of intermediate memory of one call of the entry function, in bytes,
    as a formula over the entry's symbols (``dync.peak``)."""

    formula: str
    arena: str
    iree: str
    min: int
    max: int
    symbols: dict[str, tuple[int, int]]
    versions: dict[str, str] = field(default_factory=dict)  # other entry point -> its `iree`

    @property
    def expr(self) -> sympy.Expr:
        return parse_dim(self.formula, evaluate=False)

    def _eval(self, text: str, values: Mapping[str, int], missing: str) -> int:
        expr = parse_dim(text, evaluate=False)
        subs = {}
        for s in expr.free_symbols:
            if s.name in values:
                subs[s] = int(values[s.name])
            elif missing in ("min", "max") and s.name in self.symbols:
                subs[s] = self.symbols[s.name][0 if missing == "min" else 1]
            else:
                raise KeyError(f"no value for symbol {s.name!r} of the predicted peak "
                               f"{self.formula}")
        return int(sympy.floor(expr.xreplace(subs)))

    def evaluate(self, symbol_values: Mapping[str, int], missing: str = "error") -> int:
        """The peak in bytes for these symbol values. A symbol not given (one known only at
        run time, such as a `nonzero` count) raises KeyError, or takes the ``"min"`` or
        ``"max"`` of its range when `missing` says so."""
        return self._eval(self.formula, symbol_values, missing)

    def evaluate_arena(self, symbol_values: Mapping[str, int], missing: str = "error") -> int:
        """The arena size the plan's offsets need for these symbol values."""
        return self._eval(self.arena, symbol_values, missing)

    def evaluate_iree(self, symbol_values: Mapping[str, int], missing: str = "error",
                      function: str | None = None) -> int:
        """The peak IREE 3.13's own allocation reaches (its slab packing shares memory
        between dynamic sizes only when they are equal), for these symbol values, in the
        entry or in `function` (a shape-specialized version or bucket the call runs)."""
        return self._eval(self.versions.get(function, self.iree), symbol_values, missing)

    def bounds(self, symbol_values: Mapping[str, int]) -> tuple[int, int]:
        """(min, max) of the peak over the ranges of the symbols not given."""
        return (self.evaluate(symbol_values, "min"), self.evaluate(symbol_values, "max"))

    @classmethod
    def from_report(cls, peak: Mapping) -> Peak | None:
        """The peak a compile report carries (`Report.peak`; no symbol ranges), None if the
        pass did not run."""
        if not peak:
            return None
        return cls(peak["formula"], peak["arena"], peak["iree"], int(peak["min"]),
                   int(peak["max"]), {}, dict(peak.get("versions", {})))


def read_peak(module: ir.Module | ir.Operation | str) -> Peak | None:
    """The ``dync.peak`` a run of the pass left on `module` (an MLIR module, or its text);
    None if the pass did not run."""
    if isinstance(module, str):
        with ir.Context():
            return read_peak(ir.Module.parse(module))
    attrs = module.operation.attributes
    if PEAK_ATTR not in attrs:
        return None
    data = dync_ir.to_python(attrs[PEAK_ATTR])
    return Peak(formula=data["formula"], arena=data["arena"], iree=data["iree"],
                min=int(data["min"]),
                max=int(data["max"]),
                symbols={k: (int(v[0]), int(v[1])) for k, v in data["symbols"].items()},
                versions=dict(data.get("versions", {})))


def symbol_values(signature, args) -> dict[str, int]:
    """The values the entry's symbols take for concrete arguments (numpy arrays or torch
    tensors), read from the dims the signature names by a bare symbol."""
    values: dict[str, int] = {}
    for spec, arg in zip(signature.inputs, args, strict=False):
        for want, got in zip(spec.shape, tuple(arg.shape), strict=False):
            if isinstance(want, str) and is_symbol_name(want):
                values[want] = int(got)
    return values
