"""`CompiledModule`: a compiled `.vmfb` plus its manifest, callable like the original model."""

from __future__ import annotations

import collections
import functools
import os
import platform
import sys
import threading
import warnings
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import (
    DIVISION_CHECK,
    INDEX_CHECK,
    TRACE_ASSERT,
    DyncError,
    IndexOutOfRangeError,
    InputError,
    IntegerDivisionByZeroError,
    ModuleFormatError,
    ModuleRunError,
    OutsideCompiledRange,
    TraceAssumptionError,
)
from ..output_tree import leaves
from ..report import Report
from ..signature import Signature
from .invoke import Function, torch_from_array
from .malloc import keep_large_blocks
from .manifest import Manifest, digest, manifest_path
from .versions import Choice, Versions

# Backends whose modules contain machine code for a specific host architecture.
_HOST_ARCH = {"arm": "aarch64"}
# Plans kept per entry point: one per combination of argument shapes a module was called with.
_PLANS_KEPT = 4096


@dataclass(frozen=True)
class _Plan:
    """What a call with arguments of given dtypes and shapes runs."""

    function: Function
    choice: Choice
    sizes: tuple[tuple[str, int], ...]  # the dynamic dims' values, as `seen_sizes` counts them
    # (as_torch, counted) -> its `CompiledModule._runner`, built on the first such call.
    runners: dict = field(default_factory=dict, compare=False)


def _kinds(args: tuple) -> tuple:
    """The shape and dtype of each of a call's arguments (what decides whether it lies in the
    compiled range)."""
    return tuple((np.shape(a), str(getattr(a, "dtype", type(a)))) for a in leaves(args))


class CompiledModule:
    """A compiled model. `compiled(*args)` returns what `model(*args)` returns.

    Arguments may be torch tensors (results are torch tensors) or numpy arrays (results are
    numpy arrays); they are checked against the signature (rank, dtype, each dim in range)
    before anything runs.

    `fallback`, when set, runs a call the module fails on in IREE (a `ModuleRunError`), or
    whose sizes lie outside the part of their declared range it was compiled for
    (`OutsideCompiledRange`), and returns its result instead: `dync.compile(mode="auto")`
    sets it to the eager model, so that a program that runs in eager never fails compiled.
    The first failure in IREE warns (not a `TraceAssumptionError`: inputs that break an
    assumption of torch.export's trace, which eager decides); every fallback is counted in
    `run_time_fallbacks` and the first few are in `report.notes`.
    """

    fallback: Callable[..., Any] | None = None
    # How many of the calls that fell back `report.notes` lists (the first ones).
    NOTED_FALLBACKS = 5

    def __init__(self, vmfb: bytes, manifest: Manifest):
        self.vmfb = vmfb
        self.manifest = manifest
        if not manifest.sha256:
            manifest.sha256 = digest(vmfb)
        self._vm = None  # (SystemContext, VmModule), loaded on the first call
        self._functions: dict[str, Function] = {}
        # IREE's VM context is thread-compatible, not thread-safe ("must be externally
        # synchronized", iree/vm/context.h): one call into it at a time, and the lazy load.
        self._lock = threading.Lock()
        # Compiled with `trace_branches`: the sites its trace output codes, and the decisions
        # of the last call, [(site, taken), ...].
        self._branch_sites = list(manifest.report.get("branch_sites") or [])
        self.last_trace: list[tuple[str, bool]] | None = None
        # How often each assignment of the dynamic dims was called, for `hot_sizes`.
        self.seen_sizes: collections.Counter[tuple[tuple[str, int], ...]] = collections.Counter()
        self.versions = Versions(manifest.entry, manifest.versions, manifest.signature)
        self._plans: dict[tuple, _Plan] = {}
        # The (dtype, shape) of each of a call's flat arguments, for arguments already run
        # -> what runs them (`_runner`): a call's whole path outside IREE is then a lookup
        # and the conversions, microseconds a call that a small model would otherwise spend
        # in the checks and the nesting (`python -m benchmarks calls`). Not for modules
        # that check input values (`check_values`) or decode a branch trace.
        self._fast: dict[tuple, Callable[[tuple], Any]] = {}
        self._fast_ok = not self._branch_sites and not manifest.signature.fixed_inputs \
            and not manifest.signature.input_writes
        # Modules compiled for the other parts of a dim's declared range, where this one's
        # trace does not hold (`dync.compile(mode="auto")` adds them): a call outside this
        # module's range runs in the first that takes its sizes, before `fallback`.
        self.pieces: list[CompiledModule] = []
        # The shapes and dtypes of calls outside the compiled range -> the piece that runs
        # them (None: `fallback`), from then on without checking them again (up to
        # _PLANS_KEPT of them).
        self._outside: dict[tuple, int | None] = {}
        self.run_time_fallbacks = 0
        self._warned = False

    @property
    def signature(self) -> Signature:
        return self.manifest.signature

    @property
    def backend(self) -> str:
        return self.manifest.backend

    @property
    def target(self) -> str:
        return self.manifest.target

    @property
    def report(self) -> Report:
        return Report.from_json(self.manifest.report)

    def __repr__(self) -> str:
        sig = self.signature
        ins = ", ".join(f"{t.name}: {t.dtype}{t.shape_str()}" for t in sig.inputs)
        return f"<dync.CompiledModule main({ins}) for {self.backend}/{self.target}>"

    # -- running ---------------------------------------------------------------------------
    def _function(self, name: str | None = None) -> Function:
        name = name or self.manifest.entry
        function = self._functions.get(name)
        if function is None:
            with self._lock:
                function = self._functions.get(name) or self._load_function(name)
        return function

    def _load_function(self, name: str) -> Function:
        if self._vm is None:
            self._vm = self._load_vm()
        context, vm_module = self._vm
        vm_function = vm_module.lookup_function(name)
        if vm_function is None:
            raise ModuleFormatError(f"module has no function {name!r}")
        manifest = self.manifest
        function = self._functions[name] = Function(
            context.vm_context, context.config.device, vm_function,
            imports_arguments=manifest.reads_arguments_only
            and manifest.driver in ("local-sync", "local-task"))
        return function

    def _load_vm(self):
        import iree.runtime as rt

        arch = _HOST_ARCH.get(self.backend)
        if arch and platform.machine() not in (arch, "arm64"):
            raise DyncError(
                f"this module was compiled for backend {self.backend!r} ({arch}) and cannot run "
                f"on this {platform.machine()} host; save() it and run it on the device with\n"
                f"  iree-run-module --module=model.vmfb --device=local-sync --function=main "
                f"--input=@x.npy"
            )
        from .. import targets

        if missing := targets.missing_cpu_features(self.manifest.cpu_features):
            raise DyncError(
                f"this module was compiled for target {self.manifest.target!r}, whose code uses "
                f"CPU features this CPU ({targets.host_cpu()[0]}) lacks: {', '.join(missing)}; "
                f"run it on such a CPU, or compile it for this one (target='host') or for a "
                f"level it has (target='x86-64-v3': AVX2)"
            )
        if self.manifest.driver == "local-task":
            keep_large_blocks()  # its transients: see dync.runtime.malloc
        try:
            config = _config(self.manifest.driver, tuple(targets.allocators(self.backend)))
        except (RuntimeError, ValueError) as e:
            cause = f"{e}: {e.__cause__}" if e.__cause__ else str(e)
            raise DyncError(
                f"cannot create the IREE {self.manifest.driver!r} device for this "
                f"{self.backend} module (is a GPU with its driver present?): {cause}"
            ) from e
        try:
            vm_module = rt.VmModule.copy_buffer(config.vm_instance, self.vmfb)
            return rt.SystemContext(vm_modules=[vm_module], config=config), vm_module
        except (RuntimeError, ValueError) as e:
            raise ModuleFormatError(f"IREE cannot load this module: {e}") from e

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if kwargs:
            args = _by_position(self.manifest.parameters, args, kwargs)
        fast = self._fast.get(_fast_key(args)) if self._fast else None
        if fast is not None:  # flat arguments of a dtype and shape seen before: see `_fast`
            try:
                return fast(args)
            except ModuleRunError as e:
                if self.fallback is None:
                    raise
                self._note_fallback(e, args)
                return self.fallback(*args)
        if self._outside and (kinds := _kinds(args)) in self._outside:
            piece = self._outside[kinds]
            if piece is not None:
                return self.pieces[piece](*args)
            if self.fallback is not None:
                self.run_time_fallbacks += 1
                return self.fallback(*args)
        try:
            return self._call(*args)
        except OutsideCompiledRange as e:
            piece = self._piece_for(args)
            if piece is None and self.fallback is None:
                raise
            if len(self._outside) < _PLANS_KEPT:
                self._outside[_kinds(args)] = piece
            if piece is not None:
                return self.pieces[piece](*args)
            self._note_fallback(e, args)
            return self.fallback(*args)
        except ModuleRunError as e:
            if self.fallback is None:
                raise
            self._note_fallback(e, args)
            return self.fallback(*args)

    def _piece_for(self, args: tuple) -> int | None:
        """The first of `pieces` whose signature takes `args`, if any."""
        if not self.pieces:
            return None
        arrays, _ = _host_arrays(leaves(args))
        for k, piece in enumerate(self.pieces):
            try:
                piece.signature.check_inputs(arrays)
            except InputError:
                continue
            return k
        return None

    def _note_fallback(self, error: ModuleRunError | OutsideCompiledRange, args: tuple) -> None:
        shapes = ", ".join("x".join(map(str, np.shape(a))) or "scalar" for a in leaves(args))
        reason = str(error).splitlines()[0][:400]
        note = f"a call on inputs of shape {shapes} ran in eager PyTorch: {reason}"
        self.run_time_fallbacks += 1
        notes = self.manifest.report.setdefault("notes", [])
        if type(error) is ModuleRunError and not self._warned:  # an IREE failure
            self._warned = True
            warnings.warn(f"dync: {note} (mode='auto'; later such calls are counted in "
                          "run_time_fallbacks; please report it)", RuntimeWarning, stacklevel=3)
        if self.run_time_fallbacks <= self.NOTED_FALLBACKS:
            notes.append(note)

    def _call(self, *args: Any) -> Any:
        flat = leaves(args)
        arrays, as_torch = _host_arrays(flat)
        plan = self._plan(self._plans, self.signature, self.versions, arrays)
        self.signature.check_values(arrays)
        run = self._runner(plan, self.signature, as_torch, (self.seen_sizes, plan.sizes))
        result = run(arrays)
        if self.signature.input_writes:
            result, written = result
            _write_back(flat, written, self.signature.input_writes)
        if self._fast_ok and len(flat) == len(args):
            tensors = as_torch and all(not isinstance(a, np.ndarray) for a in args)
            count = (self.seen_sizes, plan.sizes)
            direct = self._direct_runner(plan, self.signature, arrays, count) if tensors else None
            remember_fast(self._fast, args, direct or _converting(run, _tensor_array if tensors
                                                                  else _to_numpy))
        if self._branch_sites:
            result, codes = result
            self.last_trace = [(self._branch_sites[c // 2], bool(c % 2))
                               for c in np.asarray(codes).tolist()]
        return result

    def invocation(self, *args: Any) -> tuple[str, list[np.ndarray]]:
        """The function of the module a call on `args` runs and the arrays it hands IREE,
        checked as a call checks them (an `InputError` otherwise): what
        `iree-run-module --function=NAME --input=...` runs for the same call, and what
        `dync profile` times."""
        arrays, _ = _host_arrays(leaves(args))
        choice = self.versions.choose(self.signature.check_inputs(arrays))
        self.signature.check_values(arrays)
        if self.signature.narrow_inputs:
            arrays = self.signature.carried_inputs(arrays)
        return choice.function, choice.arguments(arrays)

    def hot_sizes(self, shapes: int = 3) -> dict[str, list[int]]:
        """The sizes of the dynamic dims in the `shapes` input shapes this module was called
        with most often, as `dync.compile(..., specialize=...)` takes them: recompiling with
        them gives versions for the observed hot shapes (per combination of the sizes, when
        several dims are dynamic)."""
        return most_frequent_sizes(self.seen_sizes, shapes)

    def _plan(self, plans: dict, signature: Signature, versions: Versions,
              arrays: list[np.ndarray]) -> _Plan:
        """What a call on `arrays` runs, worked out once per combination of their dtypes and
        shapes (`plans` holds them): the signature's checks (an `InputError` for arguments
        outside it), the version, the function."""
        key = tuple((a.dtype, a.shape) for a in arrays)
        plan = plans.get(key)
        if plan is None:
            bound = signature.check_inputs(arrays)
            choice = versions.choose(bound)
            plan = _Plan(self._function(choice.function), choice,
                         tuple(sorted(bound.items())))
            if len(plans) < _PLANS_KEPT:
                plans[key] = plan
        return plan

    def _runner(self, plan: _Plan, signature: Signature, as_torch: bool,
                count: tuple[collections.Counter, Any] | None) -> Callable[[list], Any]:
        """`run(arrays)`: `plan` on C-contiguous `arrays` (one call into the VM context at a
        time), its results as torch tensors where `as_torch`, nested as `signature` says,
        counting the call in `count` (a counter and its key) under the same lock. Built once
        per plan and way of calling it: what each call does is worked out here."""
        run = plan.runners.get((as_torch, count is not None))
        if run is None:
            run = plan.runners[as_torch, count is not None] = self._new_runner(
                plan, signature, as_torch, count)
        return run

    def _new_runner(self, plan: _Plan, signature: Signature, as_torch: bool,
                    count: tuple[collections.Counter, Any] | None) -> Callable[[list], Any]:
        function, lock = plan.function, self._lock
        # Bucket versions take padded arguments and the symbols' values; others as they are.
        arguments = plan.choice.arguments if plan.choice.pads or plan.choice.sizes else None
        carried = signature.carried_inputs if signature.narrow_inputs else None
        # Without `count`, a counter nobody reads: one path for both.
        counter, counted = count if count is not None else (collections.Counter(), None)
        # Torch results come straight from IREE's buffers unless numpy must retype them.
        retyped, through_numpy = signature.retyped_outputs, not as_torch or signature.bytes_outputs
        call = function if through_numpy else function.tensors
        declared = (signature.declared_dtypes if through_numpy else _signed) if retyped else None
        from_numpy = torch_from_array if as_torch and through_numpy else None
        nest = signature.output_nester  # with input writes: (results, new input values)

        if carried is arguments is declared is from_numpy is None:  # usual
            return _usual_runner(call, lock, counter, counted, nest)

        def run(arrays: list) -> Any:
            if carried is not None:
                arrays = carried(arrays)
            if arguments is not None:
                arrays = arguments(arrays)
            try:
                with lock:
                    counter[counted] += 1
                    outputs = call(arrays)
            except (RuntimeError, IndexError, ValueError) as e:  # iree.runtime status errors
                raise _run_time_error(e) from e
            if declared is not None:
                outputs = declared(outputs)
            if from_numpy is not None:
                outputs = [from_numpy(o) for o in outputs]
            return outputs if nest is None else nest(outputs)

        return run

    def _direct_runner(self, plan: _Plan, signature: Signature, arrays: list[np.ndarray],
                       count: tuple[collections.Counter, Any]) -> Callable[[tuple], Any] | None:
        """`run(tensors)`: `plan` on CPU torch tensors of the dtypes of `arrays` (what
        `_runner(plan, signature, True, count)` runs on their arrays), the function's own
        `Function.tensor_runner`; None where a call needs more than the usual runner does
        (padded versions, retyped inputs or results) or its results do not come through
        DLPack."""
        choice = plan.choice
        if choice.pads or choice.sizes or signature.narrow_inputs or signature.bytes_outputs:
            return None
        nest = signature.output_nester
        if signature.retyped_outputs:  # integers: at most viewed as signed (3 us less a call)
            nest = _signed if nest is None else _composed(nest, _signed)
        return plan.function.tensor_runner(arrays, self._lock, count, nest, _tensor_array,
                                           _run_time_error)

    # -- persistence -----------------------------------------------------------------------
    def save(self, path: str | os.PathLike) -> Path:
        """Write `path` (.vmfb, entry function `main`) and its JSON manifest beside it (and the
        transform spec its IREE flags name, if any)."""
        path = Path(path)
        if path.suffix != ".vmfb":
            path = path.with_suffix(path.suffix + ".vmfb") if path.suffix else path.with_suffix(".vmfb")
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(self.vmfb)
        self.manifest.with_files_beside(path).write(manifest_path(path))
        return path


def _usual_runner(call: Callable[[list], list], lock: threading.Lock,
                  counter: collections.Counter | dict, counted: Any,
                  nest: Callable[[list], Any] | None) -> Callable[[list], Any]:
    """`run(arrays)`: `call(arrays)` under `lock`, counted in `counter[counted]`, IREE's
    errors as dync's, its results nested by `nest` (a runner of `_new_runner`'s)."""
    def run(arrays: list) -> Any:
        try:
            with lock:
                counter[counted] += 1
                outputs = call(arrays)
        except (RuntimeError, IndexError, ValueError) as e:  # iree.runtime errors
            raise _run_time_error(e) from e
        return outputs if nest is None else nest(outputs)

    return run


# The message prefix of each check compiled into a module -> the error it raises.
_CHECKS = {INDEX_CHECK: (IndexOutOfRangeError, "index out of range"),
           DIVISION_CHECK: (IntegerDivisionByZeroError, "integer division by zero")}


def _run_time_error(error: Exception) -> DyncError:
    """The dync error for IREE's failure `error`: the check's error for a failed check
    compiled into the module (an `IndexOutOfRangeError`, an `IntegerDivisionByZeroError`;
    its message, without IREE's status and stack), else a `ModuleRunError`."""
    text = str(error)
    for prefix, (kind, what) in _CHECKS.items():
        start = text.find(prefix)
        if start >= 0:
            message = text[start + len(prefix):].split(";", 1)[0].strip()
            return kind(f"{what}: {message}")
    start = text.find(TRACE_ASSERT)
    if start >= 0:
        failed = text[start:].split(";", 1)[0].strip()
        return TraceAssumptionError(f"the inputs break an assumption of torch.export's trace "
                                    f"({failed}); eager PyTorch decides what they do")
    return ModuleRunError(f"the compiled module failed at run time: {text}")


_CONFIGS: dict[tuple[str, tuple[str, ...]], Any] = {}
_CONFIGS_LOCK = threading.Lock()


def _config(driver: str, allocators: tuple[str, ...]) -> Any:
    """The IREE device (in an `iree.runtime.Config`) of `driver` with `allocators`, one per
    process: every module loaded for it shares it, and it lives as long as the process. A
    torch result is a buffer of this device's (`Function.tensors`), whose memory the device
    frees when it goes: a device per module freed results the caller still held once the
    module was gone (a crash reading them)."""
    import iree.runtime as rt

    with _CONFIGS_LOCK:
        config = _CONFIGS.get((driver, allocators))
        if config is None:
            if allocators:
                device = rt.get_driver(driver).create_default_device(allocators=list(allocators))
                config = rt.Config(device=device)
            else:
                config = rt.Config(driver)
            _CONFIGS[driver, allocators] = config
        return config


def _composed(outer: Callable[[Any], Any], inner: Callable[[Any], Any]) -> Callable[[Any], Any]:
    return lambda value: outer(inner(value))


def _signed(tensors: list) -> list:
    """Torch results with each unsigned integer one (a signed result IREE returns in an
    unsigned input's buffer) viewed as its signed twin, as `Signature.declared_dtypes`."""
    twins = _signed_twins()
    return [t if t.dtype not in twins else t.view(twins[t.dtype]) for t in tensors]


@functools.cache
def _signed_twins() -> dict:
    torch = sys.modules["torch"]
    return {getattr(torch, f"uint{bits}"): getattr(torch, f"int{bits}") for bits in (8, 16, 32, 64)}


def _write_back(arguments: list, values: list, writes: tuple[tuple[int, int], ...]) -> None:
    """Write each new value of an input the forward writes in place (`values`, one per
    `Signature.input_writes` pair) into the caller's argument, as eager PyTorch leaves it."""
    for value, (_, i) in zip(values, writes, strict=True):
        target = arguments[i]
        if isinstance(target, np.ndarray):
            try:
                np.copyto(target, np.asarray(value))
            except ValueError as e:  # read-only
                raise InputError(f"input {i} is written in place by the model, but the array "
                                 f"passed for it cannot be written: {e}") from e
            continue
        torch = sys.modules["torch"]
        with torch.no_grad():
            target.copy_(value if isinstance(value, torch.Tensor)
                         else torch.from_numpy(np.asarray(value)))


def _by_position(parameters: list[str], args: tuple, kwargs: dict[str, Any]) -> tuple:
    """`args` and `kwargs` as the positional arguments of a model whose inputs fill
    `parameters` in order; an `InputError` for a missing, repeated or unknown name."""
    takes = f"it takes {', '.join(parameters)}" if parameters else (
        "it takes its inputs by position only (no parameter names were recorded)")
    given, kwargs = list(args), dict(kwargs)
    for name in parameters[len(args):]:
        if name not in kwargs:
            raise InputError(f"missing input {name!r}: {takes}")
        given.append(kwargs.pop(name))
    for name in kwargs:
        why = "given by position too" if name in parameters else "no input of this module"
        raise InputError(f"keyword argument {name!r}: {why}; {takes}")
    return tuple(given)


def _fast_key(args: tuple) -> tuple | None:
    """The (dtype, shape) of each of `args` when each has them (tensors and arrays), else
    None: the key of `CompiledModule._fast`."""
    try:
        if len(args) == 1:  # (no comprehension: Python 3.11 makes a function of each)
            return ((args[0].dtype, args[0].shape),)
        return tuple([(a.dtype, a.shape) for a in args])
    except AttributeError:
        return None


def remember_fast(fast: dict, args: tuple, value: Any) -> None:
    """Keep `value` in `fast` under `_fast_key(args)` where `args` are flat tensors or
    arrays, up to _PLANS_KEPT keys."""
    key = _fast_key(args)
    if key is not None and len(fast) < _PLANS_KEPT:
        fast[key] = value


def _converting(run: Callable[[list], Any], convert: Callable[[Any], np.ndarray]
                ) -> Callable[[tuple], Any]:
    """`run` on the arguments converted by `convert`."""
    return lambda args: run([convert(a) for a in args])


def _host_arrays(values: list) -> tuple[list[np.ndarray], bool]:
    """`values` (torch tensors or numpy arrays) as C-contiguous numpy arrays, and whether any
    was a torch tensor (then results are torch tensors)."""
    # Without torch imported no argument can be a tensor: a deployed module needs no torch.
    torch = sys.modules.get("torch")
    tensor = torch.Tensor if torch is not None else ()
    arrays, as_torch = [], False
    for value in values:
        if isinstance(value, tensor):
            as_torch = True
            arrays.append(_tensor_array(value))
        else:
            arrays.append(_to_numpy(value))
    return arrays, as_torch


def _tensor_array(tensor: Any) -> np.ndarray:
    try:
        array = tensor.numpy()  # a CPU tensor with nothing to resolve: its own memory
    except (RuntimeError, TypeError):  # it needs grad, has a conjugate bit, is meta, ...
        array = _resolved_array(tensor)
    return array if array.flags.c_contiguous else np.asarray(array, order="C")


def _resolved_array(tensor: Any) -> np.ndarray:
    """`tensor` as a numpy array, detached, resolved and brought to the CPU as need be."""
    if tensor.is_meta:
        raise InputError("an input is on the meta device: it holds no data to compute on")
    try:
        return tensor.numpy(force=True)
    except TypeError as e:  # a dtype numpy lacks
        raise InputError(f"{str(tensor.dtype).removeprefix('torch.')} inputs are not supported "
                         "by the numpy bridge") from e


def _to_numpy(value: Any) -> np.ndarray:
    if isinstance(value, np.ndarray):
        return value if value.flags.c_contiguous else np.asarray(value, order="C")
    torch = sys.modules.get("torch")
    if torch is not None and isinstance(value, torch.Tensor):
        return _tensor_array(value)
    raise InputError(f"inputs must be torch tensors or numpy arrays, got {type(value).__name__}")


def load(path: str | os.PathLike, model: Any = None) -> CompiledModule:
    """Load a module written by `CompiledModule.save` (the .vmfb and its manifest). A
    host-mode module runs the model's own Python between its sub-DNNs: pass `model`."""
    path = Path(path)
    if not path.is_file():
        raise ModuleFormatError(f"no such module: {path}")
    manifest = Manifest.read(manifest_path(path))
    vmfb = path.read_bytes()
    if digest(vmfb) != manifest.sha256:
        raise ModuleFormatError(
            f"{path} is corrupted or was replaced: its sha256 does not match the manifest "
            f"{manifest_path(path).name}"
        )
    return from_parts(vmfb, manifest, model, where=str(path))


def from_parts(vmfb: bytes, manifest: Manifest, model: Any = None,
               where: str = "the module") -> CompiledModule:
    """The module a vmfb and its manifest make: a `HostModule` around `model` when it was
    compiled in host mode, else a `CompiledModule`."""
    if manifest.subdnns:
        from .host import HostModule

        if model is None:
            raise DyncError(
                f"{where} was compiled in host mode: its sub-DNNs are driven by the model's own "
                "Python, so load it with dync.load(path, model=model)"
            )
        return HostModule(model, vmfb, manifest)
    return CompiledModule(vmfb, manifest)


def most_frequent_sizes(seen: Mapping[tuple[tuple[str, int], ...], int],
                        shapes: int) -> dict[str, list[int]]:
    """{dim: sorted sizes} over the `shapes` most frequent assignments in `seen`."""
    sizes: dict[str, set[int]] = {}
    for values, _ in collections.Counter(seen).most_common(shapes):
        for name, value in values:
            sizes.setdefault(name, set()).add(value)
    return {name: sorted(v) for name, v in sorted(sizes.items())}
