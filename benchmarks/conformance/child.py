"""A conformance worker: reads case directories from stdin, one per line; for each compiles its
`model.onnx` with `dync.compile`'s defaults, runs it on the stored inputs, compares with the
stored outputs and prints one JSON line. A case that kills the process is the parent's to
report (it knows which case it handed over last).

    python -m benchmarks.conformance.child < list-of-case-directories
"""

from __future__ import annotations

import json
import sys
import time
import traceback
from pathlib import Path

import ml_dtypes
import numpy as np
import onnx
from onnx import numpy_helper

RTOL, ATOL = 1e-3, 1e-5
# Ops that draw random numbers: their expected outputs are one draw of numpy's generator, so
# only dtypes and shapes are compared.
RANDOM_OPS = frozenset({"Bernoulli", "RandomNormal", "RandomNormalLike", "RandomUniform",
                        "RandomUniformLike", "Multinomial"})


def _value(path: Path, type_proto: onnx.TypeProto):
    """A stored test value, parsed (protobuf, no code run): an array, a list or None."""
    kind = type_proto.WhichOneof("value")
    proto = {"sequence_type": onnx.SequenceProto, "optional_type": onnx.OptionalProto}.get(
        kind, onnx.TensorProto)()
    proto.ParseFromString(path.read_bytes())
    if kind == "sequence_type":
        return numpy_helper.to_list(proto)
    if kind == "optional_type":
        return numpy_helper.to_optional(proto)
    return numpy_helper.to_array(proto)


def _stored(directory: Path, prefix: str, declared) -> list:
    data = directory / "test_data_set_0"
    return [_value(data / f"{prefix}_{i}.pb", info.type) for i, info in enumerate(declared)
            if (data / f"{prefix}_{i}.pb").exists()]


def _epsilon(dtype: np.dtype) -> float | None:
    """The machine epsilon of a floating-point dtype, numpy's or ml_dtypes' (bfloat16 and the
    float8 types are numpy kind 'V', but float8_e5m2 kind 'f', which np.finfo refuses); None
    for other dtypes."""
    if dtype.kind in "fc" and dtype.type.__module__ == "numpy":
        return float(np.finfo(dtype).eps)
    try:
        return float(ml_dtypes.finfo(dtype).eps)
    except (TypeError, ValueError):
        return None


def _differs(got, want, rtol: float, atol: float, values: bool = True) -> str | None:
    """Why `got` is not `want` (None when it is): dtype, shape, then (with `values`) values."""
    if isinstance(want, list) or want is None:
        if not isinstance(got, (list, tuple)) or len(got) != len(want or []):
            return f"expected a sequence of {len(want or [])}, got {type(got).__name__}"
        for i, (g, w) in enumerate(zip(got, want, strict=True)):
            if why := _differs(g, w, rtol, atol, values):
                return f"item {i}: {why}"
        return None
    got = np.asarray(got)
    if got.dtype != want.dtype:
        return f"dtype {got.dtype}, expected {want.dtype}"
    if got.shape != want.shape:
        return f"shape {got.shape}, expected {want.shape}"
    if not values:
        return None
    if (eps := _epsilon(want.dtype)) is not None:
        # A 16-bit float result is compared at its own precision: two units in the last place.
        got, want = got.astype(np.float64), want.astype(np.float64)
        close = np.isclose(got, want, rtol=max(rtol, 2 * eps), atol=atol, equal_nan=True)
        if not close.all():
            error = np.abs(got - want)
            return (f"{int((~close).sum())} of {want.size} values differ "
                    f"(max abs error {np.nanmax(np.where(close, 0, error)):.3g})")
        return None
    if not np.array_equal(got, want):
        return f"{int((got != want).sum())} of {want.size} values differ"
    return None


def run_case(directory: Path, rtol: float, atol: float) -> dict:
    import dync
    from dync.errors import DyncError

    model = onnx.load(directory / "model.onnx")
    inputs = _stored(directory, "input", model.graph.input)
    outputs = _stored(directory, "output", model.graph.output)
    stage = "compile"
    try:
        # The stored inputs are the example: they fix sequence lengths and optionals' presence.
        compiled = dync.compile(str(directory / "model.onnx"), tuple(inputs))
        stage = "run"
        got = compiled(*inputs)
    except DyncError as e:
        return {"outcome": "error", "stage": stage,
                "detail": f"{type(e).__name__}: {str(e).strip().splitlines()[0][:300]}"}
    except Exception as e:  # noqa: BLE001 - anything else is dync failing to say why
        where = traceback.extract_tb(e.__traceback__)[-1]
        return {"outcome": "internal", "stage": stage,
                "detail": f"{type(e).__name__}: {str(e).strip()[:200]} "
                          f"({Path(where.filename).name}:{where.lineno})"}
    got = list(got) if isinstance(got, (tuple, list)) else [got]
    if len(got) != len(outputs):
        return {"outcome": "mismatch", "stage": "compare",
                "detail": f"{len(got)} outputs, expected {len(outputs)}"}
    random = any(node.op_type in RANDOM_OPS for node in model.graph.node)
    for i, (g, w) in enumerate(zip(got, outputs, strict=True)):
        if why := _differs(g, w, max(rtol, RTOL), max(atol, ATOL), values=not random):
            return {"outcome": "mismatch", "stage": "compare", "detail": f"output {i}: {why}"}
    return {"outcome": "pass", "stage": "", "detail": ""}


def main() -> None:
    import dync  # noqa: F401 - loaded before the first case, so that its clock is the case's

    print(json.dumps({"ready": True}), flush=True)
    for line in sys.stdin:
        name, rtol, atol, path = line.rstrip("\n").split("\t")
        start = time.perf_counter()
        print(json.dumps({"start": name}), flush=True)
        result = run_case(Path(path), float(rtol), float(atol))
        result.update(name=name, seconds=round(time.perf_counter() - start, 2))
        print(json.dumps(result), flush=True)


if __name__ == "__main__":
    main()
