"""The `dync` command line: compile, run, and list targets.

    dync compile model.onnx -o m.vmfb --backend arm --target jetson-orin
    dync compile examples/early_exit.py:build -o m.vmfb
    dync run m.vmfb --input @x.npy --output y.npy
    dync profile m.vmfb --input @x.npy
"""

from __future__ import annotations

import argparse
import errno
import importlib
import importlib.util
import os
import re
import sys
import tempfile
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
_NPY_MAGIC = b"\x93NUMPY"


def writable(path: str | os.PathLike, what: str = "output") -> Path:
    """`path`, once a file can be created where it goes (its directory is created if missing):
    checked before a compile or a run, whose result would otherwise be lost, with a traceback,
    only at the end. Raises a DyncError "cannot write the WHAT PATH: why" otherwise."""
    path = Path(path)
    try:
        reason = _unwritable(path)
    except OSError as e:
        reason = e.strerror or str(e)
    if reason:
        raise DyncError(f"cannot write the {what} {path}: {reason}")
    return path


def _unwritable(path: Path) -> str | None:
    """Why no file can be written at `path`, or None when a probe file could be."""
    if path.is_dir():
        return "it is a directory"
    if path.exists() and not os.access(path, os.W_OK):
        return os.strerror(errno.EACCES)
    directory = path.parent
    existing = next((d for d in (directory, *directory.parents) if d.exists()), directory)
    if not existing.is_dir():
        return f"{existing} is not a directory"
    try:
        directory.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        return f"cannot create the directory {directory}: {e.strerror}"
    try:
        fd, probe = tempfile.mkstemp(dir=directory, prefix=".dync-probe-")
    except OSError as e:
        return f"cannot create a file in {directory}: {e.strerror}"
    os.close(fd)
    os.unlink(probe)
    return None


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


def _specialize(requests: list[str] | None,
                off: bool) -> bool | dict[str, list[int]] | None:
    """--specialize NAME=SIZE[,SIZE...] (repeatable) / --no-specialize -> compile's `specialize`
    (None, neither: dync's default)."""
    if off:
        return False
    if not requests:
        return None
    return _sizes("--specialize", requests)


def _cmd_compile(args: argparse.Namespace) -> int:
    # Every file the compile writes is checked first: a compile takes a while.
    out = writable(args.output or Path(args.model.split(":")[0]).with_suffix(".vmfb").name)
    for flag, target in (("--dump-ir", args.dump_ir), ("--dump-rewritten", args.dump_rewritten)):
        if target:
            writable(target, f"{flag} file")
    compiled = _compiled(args, dump_ir=args.dump_ir)
    try:
        path = compiled.save(out)
    except OSError as e:
        raise DyncError(f"cannot write the output {out}: {e.strerror or e}") from None
    if args.dump_rewritten:
        rewritten = compiled.report.rewritten
        _write_text(args.dump_rewritten, "--dump-rewritten file",
                    "".join(f"# {name} (rewritten by dync)\n{src}\n\n"
                            for name, src in rewritten.items())
                    or "# nothing was rewritten: no forward has data-dependent control flow\n")
    if not args.quiet:
        print(compiled.report)
    print(f"wrote {path} and {path.name.removesuffix('.vmfb')}.manifest.json")
    return 0


def _cmd_explain(args: argparse.Namespace) -> int:
    print(_compiled(args).report.explain())
    return 0


def _compiled(args: argparse.Namespace, dump_ir: str | None = None):
    """`dync.compile` of the MODEL and options `args` name (`dync compile`, `dync explain`)."""
    from .api import compile as dync_compile

    is_onnx = args.model.endswith(".onnx")
    if args.dim and not is_onnx:
        raise DyncError("--dim is for ONNX models; a PyTorch factory returns its dynamic_shapes")
    if is_onnx:
        model, example, dynamic = args.model, None, _onnx_dims(args.dim)
    else:
        model, example, dynamic = _load_factory(args.model)
    return dync_compile(
        model, example, dynamic_shapes=dynamic, backend=args.backend, target=args.target,
        mode=args.mode, extra_flags=tuple(args.iree_flag or ()), progress=not args.quiet,
        dump_ir=dump_ir, cache=not args.no_cache,
        specialize=_specialize(args.specialize, args.no_specialize),
        buckets=_sizes("--bucket", args.bucket) or None, threads=args.threads,
    )


def _write_text(path: str, what: str, text: str) -> None:
    try:
        Path(path).write_text(text, encoding="utf-8")
    except OSError as e:
        raise DyncError(f"cannot write the {what} {path}: {e.strerror or e}") from None


def _parse_input(text: str) -> np.ndarray:
    """One --input: @FILE.npy or SHAPExDTYPE=VALUE, or a DyncError that names it and says why."""
    if text.startswith("@"):
        return _read_npy(text[1:], f"--input {text}")
    m = _FILL.match(text)
    if not m:
        raise DyncError(f"--input {text}: expected @FILE.npy or SHAPExDTYPE=VALUE "
                        "(e.g. 2x8xf32=0.5)")
    if m["dtype"] not in _IREE_DTYPES:
        raise DyncError(f"--input {text}: unknown element type {m['dtype']!r} "
                        f"(one of {', '.join(_IREE_DTYPES)})")
    dtype = np.dtype(_IREE_DTYPES[m["dtype"]])
    value = _fill_value(m["value"], dtype, f"--input {text}")
    shape = tuple(int(d) for d in m["shape"].split("x") if d)
    try:
        return np.full(shape, value, dtype=dtype)
    except (ValueError, MemoryError) as e:
        raise DyncError(f"--input {text}: cannot make an array of shape {list(shape)}: {e}") from None


def _fill_value(text: str, dtype: np.dtype, arg: str) -> float:
    """VALUE of SHAPExDTYPE=VALUE as a number `dtype` holds exactly (numpy would wrap 300 into
    an int8 or turn nan into an arbitrary integer without a word)."""
    try:
        value = float(text)
    except ValueError:
        raise DyncError(f"{arg}: the value {text!r} is not a number") from None
    if dtype.kind == "b":
        fits = value in (0, 1)
    elif dtype.kind in "iu":
        info = np.iinfo(dtype)
        fits = value.is_integer() and info.min <= value <= info.max
    else:
        fits = True
    if not fits:
        raise DyncError(f"{arg}: {text} is not a value of {dtype.name}")
    return value


def _read_npy(path: str, arg: str) -> np.ndarray:
    """The array saved in `path` by np.save. Never unpickled (allow_pickle=False): a file from
    elsewhere runs no code here, so an object array is refused, as is any other file."""
    try:
        with open(path, "rb") as f:
            if f.read(len(_NPY_MAGIC)) != _NPY_MAGIC:
                raise DyncError(f"{arg}: cannot read {path}: not a .npy file (it does not "
                                "start with NumPy's header; np.save writes one)")
            f.seek(0)
            return np.lib.format.read_array(f, allow_pickle=False)
    except OSError as e:
        raise DyncError(f"{arg}: cannot read {path}: {e.strerror or e}") from None
    except ValueError as e:
        # numpy refuses an array of Python objects when it may not unpickle: it says so by
        # naming allow_pickle, an option dync never offers.
        reason = ("it holds an array of Python objects, which dync does not load (they would "
                  "be unpickled); save a numeric array" if "allow_pickle" in str(e)
                  else f"not a valid .npy file: {e}")
        raise DyncError(f"{arg}: cannot read {path}: {reason}") from None


def _cmd_run(args: argparse.Namespace) -> int:
    from .output_tree import leaves
    from .runtime import load

    inputs = [_parse_input(t) for t in args.input or []]
    for target in args.output or ():
        writable(target, "--output file")
    module = load(args.module)
    outputs = [None if out is None else np.asarray(out)  # a returned int too
               for out in _results(module(*inputs), leaves)]
    if args.output and len(args.output) != len(outputs):
        raise DyncError(f"the module returns {len(outputs)} output(s); got {len(args.output)} --output")
    for i, out in enumerate(outputs):
        if out is None:  # an output the model returns on some paths only, or a None
            print(f"output {i}: None" + (f" (nothing written to {args.output[i]})"
                                         if args.output else ""))
            continue
        if args.output:
            try:
                np.save(args.output[i], out)
            except OSError as e:
                raise DyncError(f"cannot write the --output file {args.output[i]}: "
                                f"{e.strerror or e}") from None
        print(f"output {i}: {out.dtype}{list(out.shape)}" + ("" if args.output else f"\n{out}"))
    return 0


def _results(value, leaves) -> list:
    """A call's results in order, each None among them too (`leaves` drops them, as inputs)."""
    if value is None:
        return [None]
    if isinstance(value, tuple | list):
        return [r for v in value for r in _results(v, leaves)]
    if isinstance(value, dict):
        return [r for v in value.values() for r in _results(v, leaves)]
    return leaves(value)


def _cmd_profile(args: argparse.Namespace) -> int:
    from .runtime import load
    from .runtime.profile import format_profile, profile

    inputs = [_parse_input(t) for t in args.input or []]
    module = load(args.module)
    function, arrays = module.invocation(*inputs)
    found = profile(module.vmfb, module.manifest.driver, tuple(targets.allocators(module.backend)),
                    function, arrays, calls=args.calls)
    print(format_profile(found, top=args.top))
    return 0


def _cmd_targets(args: argparse.Namespace) -> int:
    for backend in targets.backends():
        default = targets.resolve(backend)
        print(f"{backend} (driver {default.driver}, default target {default.name})")
        for name, description in targets.presets(backend).items():
            print(f"  {name:<16} {description}")
    return 0


def _compile_options(c: argparse.ArgumentParser) -> None:
    """The options `dync compile` and `dync explain` share."""
    c.add_argument("model")
    c.add_argument("--backend", default="llvm-cpu", choices=targets.backends())
    c.add_argument("--target", help="target preset of the backend (see `dync targets`)")
    c.add_argument("--mode", default="auto", choices=("auto", "graph", "host"))
    c.add_argument("--dim", action="append", metavar="INPUT:AXIS=NAME[:MIN:MAX]",
                   help="ONNX only: name and bound a dynamic dim (repeatable)")
    c.add_argument("--iree-flag", action="append", metavar="FLAG", help="extra IREE compiler flag")
    c.add_argument("--specialize", action="append", metavar="NAME=SIZE[,SIZE...]",
                   help="compile shape-specialized versions for these sizes of a dynamic dim "
                        "(default: none in graph mode; in host mode, versions at the sizes "
                        "the example called each repeatedly called sub-DNN with)")
    c.add_argument("--bucket", action="append", metavar="NAME=SIZE[,SIZE...]",
                   help="compile zero-padded static versions for dims up to each of these sizes "
                        "of a dynamic dim (repeatable; a version per combination; dync-bucket)")
    c.add_argument("--no-specialize", action="store_true",
                   help="no shape-specialized versions, even where --specialize says so")
    c.add_argument("--no-cache", action="store_true",
                   help="always run IREE, even for dync IR compiled before (see dync.cache)")
    c.add_argument("--threads", type=int, default=1, metavar="N",
                   help="CPU threads the module runs on (llvm-cpu; default 1: IREE's "
                        "local-sync device; more: its local-task device)")
    c.add_argument("-q", "--quiet", action="store_true", help="no progress or report")


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="dync", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)

    c = sub.add_parser("compile", help="compile a PyTorch factory or an ONNX model to a .vmfb",
                       description="Compile MODEL: a .onnx file, or MODULE:FACTORY / FILE.py:FACTORY "
                       "where FACTORY() returns (model, example_args[, dynamic_shapes]).")
    _compile_options(c)
    c.add_argument("-o", "--output", help="output .vmfb (manifest written beside it)")
    c.add_argument("--dump-ir", metavar="FILE.mlir", help="write the dync IR handed to IREE")
    c.add_argument("--dump-rewritten", metavar="FILE.py",
                   help="write the rewritten source of each forward with control flow")
    c.set_defaults(func=_cmd_compile)

    e = sub.add_parser("explain", help="compile MODEL and say what runs compiled, what runs "
                       "as Python, and why",
                       description="Compile MODEL as `dync compile` does (writing nothing) and "
                       "print each graph break: the region, the stage that failed, the file and "
                       "line of the model's code, the construct and the internal reason.")
    _compile_options(e)
    e.set_defaults(func=_cmd_explain)

    r = sub.add_parser("run", help="run a compiled module on this host",
                       description="Run the `main` function of a module saved by dync.")
    r.add_argument("module", help="the .vmfb (its .manifest.json must be beside it)")
    r.add_argument("--input", action="append", metavar="@FILE.npy|SHAPExDTYPE=VALUE",
                   help="one per argument, in order")
    r.add_argument("--output", action="append", metavar="FILE.npy", help="one per result")
    r.set_defaults(func=_cmd_run)

    p = sub.add_parser("profile", help="time a call of a compiled CPU module, dispatch by "
                       "dispatch",
                       description="Run the function of a module saved by dync that a call on "
                       "these inputs runs, CALLS times with IREE's iree-benchmark-module (the "
                       "time of a call), then again under IREE's HAL profiler, and print each "
                       "dispatch's time, the command buffers and transient allocations, and "
                       "the rest (IREE's VM running the host code).")
    p.add_argument("module", help="the .vmfb (its .manifest.json must be beside it)")
    p.add_argument("--input", action="append", metavar="@FILE.npy|SHAPExDTYPE=VALUE",
                   help="one per argument, in order")
    p.add_argument("--calls", type=int, default=100, help="calls timed (default 100)")
    p.add_argument("--top", type=int, default=20, help="dispatches listed (default 20)")
    p.set_defaults(func=_cmd_profile)

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
