"""The `dync` command line: compile, run, and list targets.

    dync compile model.onnx -o m.vmfb --backend arm --target jetson-orin
    dync compile examples/early_exit.py:build -o m.vmfb
    dync run m.vmfb --input @x.npy --output y.npy
"""

from __future__ import annotations

import argparse
import importlib
import importlib.util
import os
import re
import sys
from pathlib import Path

import numpy as np

from . import targets
from .errors import DyncError

_DIM = re.compile(r"^(?P<input>[^:]+):(?P<axis>\d+)=(?P<name>[A-Za-z_]\w*)(?::(?P<min>\d+):(?P<max>\d+))?$")
_FILL = re.compile(r"^(?P<shape>(?:\d+x)*)(?P<dtype>[a-z]+\d*)=(?P<value>.+)$")
_IREE_DTYPES = {
    "f32": "float32", "f64": "float64", "f16": "float16", "i64": "int64", "i32": "int32",
    "i16": "int16", "i8": "int8", "ui8": "uint8", "i1": "bool",
}


def _load_factory(spec: str):
    """`pkg.module:factory` or `path/to/file.py:factory` -> the factory's result."""
    target, _, attr = spec.rpartition(":")
    if not target or not attr:
        raise DyncError(f"expected MODULE:FACTORY or FILE.py:FACTORY, got {spec!r}")
    if target.endswith(".py"):
        path = Path(target)
        if not path.is_file():
            raise DyncError(f"no such file: {target}")
        module_spec = importlib.util.spec_from_file_location(path.stem, path)
        module = importlib.util.module_from_spec(module_spec)
        sys.path.insert(0, str(path.parent.resolve()))
        module_spec.loader.exec_module(module)
    else:
        sys.path.insert(0, os.getcwd())
        module = importlib.import_module(target)
    factory = getattr(module, attr, None)
    if factory is None:
        raise DyncError(f"{target} has no attribute {attr!r}")
    result = factory()
    if not isinstance(result, tuple) or len(result) not in (2, 3):
        raise DyncError(
            f"{spec} must return (model, example_args) or (model, example_args, dynamic_shapes)"
        )
    return result if len(result) == 3 else (*result, None)


def _onnx_dims(specs: list[str]) -> dict | None:
    if not specs:
        return None
    dims: dict = {}
    for spec in specs:
        m = _DIM.match(spec)
        if not m:
            raise DyncError(f"--dim expects INPUT:AXIS=NAME[:MIN:MAX], got {spec!r}")
        value = m["name"] if m["min"] is None else (m["name"], int(m["min"]), int(m["max"]))
        dims.setdefault(m["input"], {})[int(m["axis"])] = value
    return dims


def _sizes(flag: str, requests: list[str] | None) -> dict[str, list[int]]:
    """NAME=SIZE[,SIZE...] (`flag` repeated) -> {NAME: [SIZE, ...]}."""
    sizes: dict[str, list[int]] = {}
    for request in requests or ():
        name, _, values = request.partition("=")
        try:
            sizes.setdefault(name.strip(), []).extend(int(v) for v in values.split(","))
        except ValueError:
            raise DyncError(f"{flag} {request!r}: expected NAME=SIZE[,SIZE...], "
                            "e.g. batch=1,2,4") from None
    return sizes


def _specialize(requests: list[str] | None, off: bool) -> bool | dict[str, list[int]]:
    """--specialize NAME=SIZE[,SIZE...] (repeatable) / --no-specialize -> compile's `specialize`."""
    if off or not requests:
        return False
    return _sizes("--specialize", requests)


def _cmd_compile(args: argparse.Namespace) -> int:
    from .api import compile as dync_compile

    is_onnx = args.model.endswith(".onnx")
    if is_onnx:
        model, example, dynamic = args.model, None, _onnx_dims(args.dim)
    else:
        if args.dim:
            raise DyncError("--dim is for ONNX models; a PyTorch factory returns its dynamic_shapes")
        model, example, dynamic = _load_factory(args.model)
    out = Path(args.output or Path(args.model.split(":")[0]).with_suffix(".vmfb").name)
    compiled = dync_compile(
        model, example, dynamic_shapes=dynamic, backend=args.backend, target=args.target,
        mode=args.mode, extra_flags=tuple(args.iree_flag or ()), progress=not args.quiet,
        dump_ir=args.dump_ir, cache=not args.no_cache,
        specialize=_specialize(args.specialize, args.no_specialize),
        buckets=_sizes("--bucket", args.bucket) or None,
    )
    path = compiled.save(out)
    if args.dump_rewritten:
        rewritten = compiled.report.rewritten
        Path(args.dump_rewritten).write_text(
            "".join(f"# {name} (rewritten by dync)\n{src}\n\n" for name, src in rewritten.items())
            or "# nothing was rewritten: no forward has data-dependent control flow\n",
            encoding="utf-8",
        )
    if not args.quiet:
        print(compiled.report)
    print(f"wrote {path} and {path.name.removesuffix('.vmfb')}.manifest.json")
    return 0


def _parse_input(text: str) -> np.ndarray:
    if text.startswith("@"):
        return np.load(text[1:], allow_pickle=False)
    m = _FILL.match(text)
    if not m or m["dtype"] not in _IREE_DTYPES:
        raise DyncError(f"--input expects @file.npy or SHAPExDTYPE=VALUE (e.g. 2x8xf32=0.5), got {text!r}")
    shape = tuple(int(d) for d in m["shape"].split("x") if d)
    return np.full(shape, float(m["value"]), dtype=_IREE_DTYPES[m["dtype"]])


def _cmd_run(args: argparse.Namespace) -> int:
    from .output_tree import leaves
    from .runtime import load

    module = load(args.module)
    inputs = [_parse_input(t) for t in args.input or []]
    outputs = leaves(module(*inputs))
    if args.output and len(args.output) != len(outputs):
        raise DyncError(f"the module returns {len(outputs)} output(s); got {len(args.output)} --output")
    for i, out in enumerate(outputs):
        if args.output:
            np.save(args.output[i], out)
        print(f"output {i}: {out.dtype}{list(out.shape)}" + ("" if args.output else f"\n{out}"))
    return 0


def _cmd_targets(args: argparse.Namespace) -> int:
    for backend in targets.backends():
        default = targets.resolve(backend)
        print(f"{backend} (driver {default.driver}, default target {default.name})")
        for name, description in targets.presets(backend).items():
            print(f"  {name:<16} {description}")
    return 0


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="dync", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)

    c = sub.add_parser("compile", help="compile a PyTorch factory or an ONNX model to a .vmfb",
                       description="Compile MODEL: a .onnx file, or MODULE:FACTORY / FILE.py:FACTORY "
                       "where FACTORY() returns (model, example_args[, dynamic_shapes]).")
    c.add_argument("model")
    c.add_argument("-o", "--output", help="output .vmfb (manifest written beside it)")
    c.add_argument("--backend", default="llvm-cpu", choices=targets.backends())
    c.add_argument("--target", help="target preset of the backend (see `dync targets`)")
    c.add_argument("--mode", default="auto", choices=("auto", "graph", "host"))
    c.add_argument("--dim", action="append", metavar="INPUT:AXIS=NAME[:MIN:MAX]",
                   help="ONNX only: name and bound a dynamic dim (repeatable)")
    c.add_argument("--iree-flag", action="append", metavar="FLAG", help="extra IREE compiler flag")
    c.add_argument("--dump-ir", metavar="FILE.mlir", help="write the dync IR handed to IREE")
    c.add_argument("--dump-rewritten", metavar="FILE.py",
                   help="write the rewritten source of each forward with control flow")
    c.add_argument("--specialize", action="append", metavar="NAME=SIZE[,SIZE...]",
                   help="compile shape-specialized versions for these sizes of a dynamic dim "
                        "(default: none, only the dynamic entry point)")
    c.add_argument("--bucket", action="append", metavar="NAME=SIZE[,SIZE...]",
                   help="compile zero-padded static versions for dims up to each of these sizes "
                        "of a dynamic dim (repeatable; a version per combination; dync-bucket)")
    c.add_argument("--no-specialize", action="store_true",
                   help="no shape-specialized versions, even where --specialize says so")
    c.add_argument("--no-cache", action="store_true",
                   help="always run IREE, even for dync IR compiled before (see dync.cache)")
    c.add_argument("-q", "--quiet", action="store_true", help="no progress or report")
    c.set_defaults(func=_cmd_compile)

    r = sub.add_parser("run", help="run a compiled module on this host",
                       description="Run the `main` function of a module saved by dync.")
    r.add_argument("module", help="the .vmfb (its .manifest.json must be beside it)")
    r.add_argument("--input", action="append", metavar="@FILE.npy|SHAPExDTYPE=VALUE",
                   help="one per argument, in order")
    r.add_argument("--output", action="append", metavar="FILE.npy", help="one per result")
    r.set_defaults(func=_cmd_run)

    t = sub.add_parser("targets", help="list backends and target presets")
    t.set_defaults(func=_cmd_targets)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    try:
        return args.func(args)
    except DyncError as e:
        print(f"dync: error: {e}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
