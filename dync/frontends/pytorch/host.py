"""Host mode (DyCL's host module, Terra's imperative co-execution): what cannot be one graph
runs as the model's own Python on the host; what it calls that can be captured becomes a
sub-DNN, an entry point of the module's one `.vmfb`.

The unit of capture is a call: a submodule's `forward` or a method of a user class, called
from host code with tensors and returning tensors. Tensors passed by keyword become the
sub-DNN's inputs by name, and the other arguments (None, bools, numbers, strings) constants
that every call must repeat to run compiled (`dync.keywords`). Capture starts at the root's callees and
falls back per region: a callee that cannot be exported whole (it recurses over Python data,
reads `.tolist()`, takes Python ints) becomes host code itself and its own callees are tried,
down to the leaves. Each fallback is reported with the file, line and reason of its failure.

Shapes of a sub-DNN's arguments come from running the example through the host code: a dim
that is one of the root's dynamic dims (same size in the example) takes that `Dim`; a dim
whose size differs between the recorded calls gets a `Dim` of its own, shared by the dims
whose sizes vary identically; every other dim is static. A call whose arguments fall outside
its sub-DNN's signature at run time runs the original Python (counted in `HostModule.stats`).
"""

from __future__ import annotations

import collections
import contextlib
import inspect
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import torch
from torch.export import Dim
from torch.utils import _pytree as pytree

from ...errors import DyncError
from ...keywords import Keywords, layout
from ...signature import Signature, SymbolSpec, TensorSpec, dtype_name
from .declared_shapes import DeclaredShapes
from .rewrite.helpers import Helpers
from .rewrite.transform import needs_rewrite, rewrite_function
from .source import op_in, user_source_in

if TYPE_CHECKING:  # the compiler is needed to capture, not to run a loaded module
    from iree.compiler import ir

    from ..common import ImportedProgram, Lowering

INT64_MAX = 2**63 - 1
Key = tuple[str, str]  # (submodule qualified name, attribute): ("", "node_forward"), ("head", "forward")


def label(key: Key) -> str:
    return ".".join(p for p in key if p) if key[1] != "forward" else (key[0] or "forward")


#: Recorded calls kept per sub-DNN for its first-call check.
EXAMPLES_KEPT = 3

#: Runs of the example with its floating-point values shuffled, whose calls tell the sizes the
#: data decides (a token count a pruning layer keeps): dynamic in the sub-DNNs they reach.
SHUFFLED_RUNS = 2


@dataclass
class SubDnn:
    name: str  # entry function in the vmfb
    key: Key
    program: ImportedProgram
    calls: int
    # Its compiled versions as the manifest lists them (`dync.api.graph._compiled_versions`).
    versions: list[dict] = field(default_factory=list)
    # (arguments, result) of calls the example made, to check the compiled sub-DNN against.
    examples: list[tuple[tuple, Any]] = field(default_factory=list)
    # After dync's passes: their dync-rdp coverage and dync-plan-execution counts.
    pass_counts: tuple[dict, dict] | None = None
    # How its calls' keyword arguments feed it (None: it is called with tensors by position).
    keywords: Keywords | None = None
    # The values its signature's symbols took in the example's calls and how often, most
    # frequent first.
    sizes: list[tuple[dict[str, int], int]] = field(default_factory=list)


@dataclass
class Fallback:
    """A region that runs as Python: where (`source`, file:line), what (`construct`), which
    stage failed (capture, passes, iree, first call) and the internal reason."""

    region: str
    source: str
    reason: str
    stage: str = "capture"
    construct: str = ""

    def __str__(self) -> str:
        return f"{self.region} runs as Python ({self.source}, at {self.stage}): {self.reason}"


def fallback(region: str, error: Exception, source: str = "-") -> Fallback:
    """The Fallback a dync error makes: its stage, the construct and the user's source line
    it names (or its compiler diagnostics do)."""
    text = str(error)
    return Fallback(region,
                    getattr(error, "source", "") or user_source_in(text) or source,
                    _first_line(error),
                    getattr(error, "stage", "") or "capture",
                    getattr(error, "construct", "") or op_in(text) or "")


@dataclass
class HostPlan:
    subdnns: list[SubDnn] = field(default_factory=list)
    fallbacks: list[Fallback] = field(default_factory=list)


def capture_host(model: torch.nn.Module, args: tuple, dynamic_shapes: Any, context: ir.Context,
                 root_error: DyncError, lower: Lowering,
                 say: Callable[[str], None] = lambda _: None) -> HostPlan:
    from .export import import_module

    plan = HostPlan([], [fallback("forward", root_error)])
    declared = DeclaredShapes.of(model.forward, args, dynamic_shapes)
    root_dims = _root_dims(args, declared)
    resized = _resized_example(args, declared)
    shuffled = [_shuffled_example(args, seed) for seed in range(SHUFFLED_RUNS)]
    host: set[Key] = set()
    captured: set[Key] = set()
    while True:
        calls, examples = _record(model, args, host)
        new = [k for k in calls if k not in host and k not in captured]
        if not new:
            break
        resized_calls = _record_other(model, resized and resized[0], host)
        shuffled_calls = [_record_other(model, example, host) for example in shuffled]
        for key in new:
            name = f"subdnn_{len(plan.subdnns)}"
            try:
                target = resolve(model, key)
                keywords, recorded = _by_position(key, target, calls[key])
                probe = None
                if resized_calls is not None and resized_calls.get(key):
                    probe = (_by_position(key, target, resized_calls[key], keywords)[1],
                             resized[1])
                other_data = [c for run in shuffled_calls if run is not None and run.get(key)
                              for c in _by_position(key, target, run[key], keywords)[1]]
                example, dims = _example_and_dims(key, recorded, root_dims, name, probe, say,
                                                  other_data)
                say(f"host mode: capturing {label(key)} as {name}")
                # `_Call.forward(*args)`: the specs of a varargs parameter are one tuple.
                call = _Call(model, key) if keywords is None \
                    else _KeywordCall(model, key, keywords)
                program = import_module(call, example, (dims,), context, lower=lower,
                                        func_name=name)
            except DyncError as e:
                host.add(key)
                plan.fallbacks.append(fallback(label(key), e, source_line(model, key)))
                continue
            captured.add(key)
            kept = _by_position(key, target, examples.get(key, []), keywords)[1]
            plan.subdnns.append(SubDnn(name, key, program, len(calls[key]),
                                       examples=[(a, result) for a, _, result in kept],
                                       keywords=keywords,
                                       sizes=observed_sizes(program.signature, recorded)))
    return plan


def observed_sizes(signature: Signature,
                   recorded: list[tuple]) -> list[tuple[dict[str, int], int]]:
    """The values `signature`'s symbols took in the `recorded` calls ((args, kwargs, result)
    each, tensors by position) and in how many, the most frequent first (ties: the first seen
    first)."""
    counts: collections.Counter = collections.Counter()
    for arguments, _, _ in recorded:
        try:
            bound = signature.check_inputs([t.numpy(force=True)
                                            for t in pytree.tree_leaves(arguments)
                                            if isinstance(t, torch.Tensor)])
        except (DyncError, TypeError):  # outside the signature; a dtype numpy lacks
            continue
        if bound:
            counts[tuple(sorted(bound.items()))] += 1
    return [(dict(assignment), count) for assignment, count in counts.most_common()]


class _Call(torch.nn.Module):
    """One call site target as a module to export: `root.<key>(*args)`. It holds the
    submodule the target belongs to, not the root, so that the export lifts that submodule's
    parameters only: holding the root, each of a BERT-base's 27 sub-DNNs lifted all ~200 of
    the model's, and capturing them took 57.9 s against 22.0 (BENCHMARKS.md "Host-mode capture
    over the submodule").
    (No Python `if` in the forwards: dync's rewriter rewrites the forward it exports.)"""

    def __init__(self, root: torch.nn.Module, key: Key):
        super().__init__()
        self.owner = root.get_submodule(key[0])
        self.key = ("", key[1])

    def forward(self, *args):
        return resolve(self.owner, self.key, rewrite=True)(*args)


class _KeywordCall(_Call):
    """`root.<key>(...)` with the tensors passed by name and the constants the calls gave."""

    def __init__(self, root: torch.nn.Module, key: Key, keywords: Keywords):
        super().__init__(root, key)
        self.keywords = keywords

    def forward(self, *args):
        return resolve(self.owner, self.key, rewrite=True)(
            **dict(zip(self.keywords.tensors, args, strict=True)), **self.keywords.constants)


def _by_position(key: Key, target: Callable, calls: list[tuple],
                 keywords: Keywords | None = None) -> tuple[Keywords | None, list[tuple]]:
    """Calls (args, kwargs, result) with their tensors by position, and how they map
    (`Keywords`; None when every call passes tensors by position alone). Every call must map
    alike; with `keywords` given, the calls are put in that layout and one that differs is
    left out (the run on a resized example, the examples kept)."""
    if keywords is None and not any(kw for _, kw, _ in calls):
        return None, calls
    try:
        signature = inspect.signature(target)
    except (TypeError, ValueError) as e:
        raise DyncError(f"{label(key)} is called with keyword arguments and has no signature "
                        f"to bind them to ({e})") from e
    strict, found = keywords is None, []
    for a, kw, result in calls:
        try:
            call = layout(signature, a, kw, lambda v: isinstance(v, torch.Tensor))
        except (TypeError, ValueError) as e:
            raise DyncError(f"{label(key)} is called with keyword arguments: {e}") from e
        if call is None:
            raise DyncError(f"{label(key)} is called with keyword arguments and takes *args, "
                            "**kwargs or positional-only parameters")
        keywords = keywords or call[0]
        if call[0] != keywords:
            if strict:
                raise DyncError(f"{label(key)} is called with different tensor parameters or "
                                f"constants ({keywords.to_json()} and {call[0].to_json()})")
            continue
        found.append((tuple(call[1]), {}, result))
    return keywords, found


def resolve(root: torch.nn.Module, key: Key, rewrite: bool = False) -> Callable:
    """The callable behind `key` (unpatched); with `rewrite`, as the export sees it: a
    method rewritten like a forward, a submodule's forward as `rewritten()` patched it on the
    instance for the export (or as the model set it there itself)."""
    module = root.get_submodule(key[0])
    if key[1] == "forward":
        if rewrite and "forward" in vars(module):
            return module.forward
        return type(module).forward.__get__(module)
    method = getattr(type(module), key[1])
    helpers = Helpers(rewrite_function, needs_rewrite)
    if rewrite and needs_rewrite(method, helpers):
        method = rewrite_function(method, owner=type(module), helpers=helpers).function
    return method.__get__(module)


def eager_call(root: torch.nn.Module, sub: SubDnn) -> Callable:
    """Sub-DNN `sub` as eager PyTorch runs it, taking its inputs by position (its compiled
    function's arguments)."""
    target = resolve(root, sub.key)
    if sub.keywords is None:
        return target
    names, constants = sub.keywords.tensors, sub.keywords.constants
    return lambda *tensors: target(**dict(zip(names, tensors, strict=True)), **constants)


def callables(root: torch.nn.Module) -> Iterator[tuple[Key, torch.nn.Module, str]]:
    """Every interceptable call target: submodules' forwards and user classes' methods."""
    for qual, module in root.named_modules():
        if qual:
            yield (qual, "forward"), module, "forward"
        if type(module).__module__.startswith("torch."):
            continue
        for attr, value in vars(type(module)).items():
            if inspect.isfunction(value) and not attr.startswith("__") and attr != "forward":
                yield (qual, attr), module, attr


def intercepted(root: torch.nn.Module, wrap: Callable[[Key, Callable], Callable]):
    """Every call target of `root` replaced by `wrap(key, original)` for a `with` block."""
    return installed([(module, attr, wrap(key, getattr(module, attr)))
                      for key, module, attr in callables(root) if attr not in vars(module)])


@contextlib.contextmanager
def installed(patches: list[tuple[torch.nn.Module, str, Callable]]):
    """Set each (module, attribute, replacement) as an instance attribute; remove them after."""
    done = []
    try:
        for module, attr, replacement in patches:
            setattr(module, attr, replacement)
            done.append((module, attr))
        yield
    finally:
        for module, attr in done:
            delattr(module, attr)


def _record(model, args, host: set[Key], keep: int = EXAMPLES_KEPT
            ) -> tuple[dict[Key, list[tuple]], dict[Key, list]]:
    """Run the example; the (args, kwargs, result) of each call made from host code, per
    target, and copies of the first `keep` of them per target."""
    calls: dict[Key, list[tuple]] = {}
    examples: dict[Key, list[tuple]] = {}
    entered: dict[Key, int] = {}
    stack: list[Key] = []

    def wrap(key, original):
        def call(*a, **kw):
            from_host = all(k in host for k in stack)
            # The first calls are kept as examples to check the sub-DNN against: copied, as
            # the model may write over its tensors in place later.
            if from_host:
                entered[key] = entered.get(key, 0) + 1
            kept = from_host and entered[key] <= keep
            arguments, keywords = (copied(a), copied(kw)) if kept else (a, kw)
            stack.append(key)
            try:
                result = original(*a, **kw)
            finally:
                stack.pop()
            if from_host:
                calls.setdefault(key, []).append(
                    (arguments, keywords, copied(result) if kept else result))
                if kept:
                    examples.setdefault(key, []).append(calls[key][-1])
            return result

        return call

    with intercepted(model, wrap), buffers_restored(model), torch.no_grad():
        model(*copied(args))  # the caller's example stays as it was if the model writes it
    return calls, examples


@contextlib.contextmanager
def buffers_restored(model: torch.nn.Module):
    """Running `model` within the block changes nothing of it: its buffers (a BatchNorm's
    running statistics in training mode) are put back after. Compiling runs the example."""
    saved = [(b, b.detach().clone()) for b in model.buffers()]
    try:
        yield
    finally:
        with torch.no_grad():
            for buffer, value in saved:
                buffer.copy_(value)


def copied(value: Any) -> Any:
    """`value` with each tensor in it cloned."""
    return pytree.tree_map(lambda t: t.clone() if isinstance(t, torch.Tensor) else t, value)


def _example_and_dims(key: Key, calls: list[tuple], root_dims: dict[int, Any], name: str,
                      probe: tuple[list | None, dict[int, dict[int, Any]]] | None = None,
                      say: Callable[[str], None] = lambda _: None,
                      other_data: Sequence[tuple] = ()):
    """The example a sub-DNN is exported with and its dims' specs. A dim whose size differs
    between the calls the example made, or in the calls of the runs on the example's values
    shuffled (`other_data`: sizes the data decides, such as the tokens a pruning layer keeps),
    is dynamic; one of constant size is dynamic when the same call in the run on the resized
    example (`probe`: its calls, and which root dim each new size of an example size stands
    for) has another size, the root's dim when it moved with one, and static when it did
    not: a layer 4 wide with an example batch of 4 stays 4 wide. Without
    that run, a size equal to one of the root's dynamic example sizes is taken to be that dim,
    with a warning (a static dim of that size would make other sizes run as Python)."""
    for a, _, result in calls:
        if not a or not all(isinstance(x, torch.Tensor) for x in a):
            kinds = ", ".join(type(x).__name__ for x in a)
            raise DyncError(f"{label(key)} takes non-tensor arguments ({kinds})")
        if not all(isinstance(x, torch.Tensor) for x in pytree.tree_leaves(result)):
            raise DyncError(f"{label(key)} returns non-tensor values")
    signatures = {tuple((x.dtype, x.dim()) for x in a) for a, _, _ in calls}
    if len(signatures) > 1:
        raise DyncError(f"{label(key)} is called with arguments of different dtypes or ranks")
    k = max(range(len(calls)), key=lambda j: sum(x.numel() for x in calls[j][0]))
    example = calls[k][0]
    other = _same_call(probe[0], example, k) if probe is not None and probe[0] else None
    moved = probe[1] if probe is not None else {}
    groups: dict[tuple, Any] = {}

    def group(sizes: tuple) -> Any:
        if sizes not in groups:
            groups[sizes] = Dim(f"{name}_{len(groups)}", min=1)
        return groups[sizes]

    alike = [a for a, _, _ in other_data if len(a) == len(example) and all(
        isinstance(y, torch.Tensor) and y.dim() == x.dim() for x, y in zip(example, a, strict=True))]
    dims = []
    for i, x in enumerate(example):
        spec = {}
        for d in range(x.dim()):
            sizes = tuple(a[i].shape[d] for a, _, _ in calls)
            if any(a[i].shape[d] not in sizes for a in alike):
                sizes += tuple(a[i].shape[d] for a in alike)
            size = sizes[0]
            if len(set(sizes)) > 1:
                spec[d] = group(sizes)
            elif other is not None:
                resized = other[i].shape[d]
                if resized != size:
                    root = moved.get(size, {}).get(resized)
                    spec[d] = root if root is not None else group(("resized", size, resized))
            elif size in root_dims and size > 1:
                spec[d] = root_dims[size]
                say(f"host mode: {label(key)}: dim {d} of argument {i} has the size of the "
                    f"example's dynamic dim '{root_dims[size].__name__}' ({size}) and is taken "
                    "to be it (a run on a resized example did not reach this call to tell); if "
                    "it is a static size, calls with other sizes run as Python")
        dims.append(spec)
    return tuple(example), tuple(dims)


def _same_call(resized_calls: list[tuple], example: tuple, k: int) -> tuple | None:
    """The arguments of the `k`th call of the run on the resized example (else of its first)
    whose arguments have the example's dtypes and ranks."""
    for a, _, _ in resized_calls[k:k + 1] + resized_calls:
        if len(a) == len(example) and all(
                isinstance(y, torch.Tensor) and y.dtype == x.dtype and y.dim() == x.dim()
                for x, y in zip(example, a, strict=True)):
            return a
    return None


def _resized_example(args: tuple, declared: DeclaredShapes
                     ) -> tuple[tuple, dict[int, dict[int, Any]]] | None:
    """The example with each dynamic dim at another size of its range (its items repeated
    cyclically along it, so that the values stay ones the model accepts), and for each example
    size, the `Dim` each new size stands for (two dims of one example size get different new
    sizes); None when there is none (`Dim.AUTO`, a derived dim, a range of one size)."""
    specs = [declared.dims(args, i) for i in range(len(args))]
    new_sizes: dict[str, int] = {}
    moved: dict[int, dict[int, Any]] = {}
    for x, spec in zip(args, specs, strict=True):
        for axis, dim in spec.items():
            low, high = getattr(dim, "min", None), getattr(dim, "max", None)
            name = getattr(dim, "__name__", None)
            if name is None or not isinstance(low, int) or not isinstance(high, int):
                return None  # no range to pick from here
            size = x.shape[axis]
            taken = moved.setdefault(size, {})
            if name not in new_sizes:
                free = [n for k in range(1, 4) for n in (size + k, size - k)
                        if max(low, 1) <= n <= high and n not in taken]
                if not free:
                    return None
                new_sizes[name] = free[0]
            taken[new_sizes[name]] = dim
    if not new_sizes:
        return None
    resized = []
    for x, spec in zip(args, specs, strict=True):
        for axis, dim in spec.items():
            rows = torch.arange(new_sizes[dim.__name__]) % x.shape[axis]
            x = x.index_select(axis, rows)
        resized.append(x)
    return tuple(resized), moved


def _shuffled_example(args: tuple, seed: int) -> tuple | None:
    """The example with the elements of each floating-point tensor shuffled (same shapes, same
    values, other data), for a run that tells the sizes the data decides; None when no
    argument is floating-point. Integer and bool tensors (token ids, masks, a tree's child
    indices) are left alone: shuffled, they could stop making sense to the model."""
    generator = torch.Generator().manual_seed(seed)
    shuffled, changed = [], False
    for x in args:
        if isinstance(x, torch.Tensor) and x.is_floating_point() and x.numel() > 1:
            order = torch.randperm(x.numel(), generator=generator)
            x, changed = x.reshape(-1)[order].reshape(x.shape), True
        shuffled.append(x)
    return tuple(shuffled) if changed else None


def _record_other(model, args: tuple | None, host: set[Key]) -> dict[Key, list[tuple]] | None:
    """The calls of a run on `args`, another example (resized or shuffled); None without one
    or when the model fails on it (a model may accept only its example's sizes)."""
    if args is None:
        return None
    try:
        return _record(model, args, host, keep=0)[0]
    except Exception:  # noqa: BLE001 - the model's own failure: fall back on sizes alone
        return None


def _root_dims(args: tuple, declared: DeclaredShapes) -> dict[int, Any]:
    """Example size -> the root's `Dim` for it."""
    found = {}
    for i, x in enumerate(args):
        for axis, dim in declared.dims(args, i).items():
            found.setdefault(x.shape[axis], dim)
    return found


def root_signature(model: torch.nn.Module, args: tuple, dynamic_shapes: Any) -> Signature:
    """The model's inputs as the user declared them (dtype, rank, static sizes, `Dim` ranges),
    checked before the host code runs: host mode rejects what graph mode would."""
    declared = DeclaredShapes.of(model.forward, args, dynamic_shapes)
    if not all(isinstance(a, torch.Tensor) for a in args):
        return Signature([], [], {}, None)  # Python values among the inputs: nothing to check
    inputs, symbols = [], {}
    for i, x in enumerate(args):
        spec = declared.dims(args, i)
        dims = []
        for axis, size in enumerate(x.shape):
            dim = spec.get(axis)
            root = getattr(dim, "root", dim)
            if dim is None or not hasattr(root, "__name__"):
                dims.append(int(size) if dim is None else f"{declared.names[i]}_{axis}")
                continue
            symbols[root.__name__] = SymbolSpec(root.__name__, max(_finite(root.min, 0), 0),
                                                _finite(root.max, INT64_MAX))
            dims.append(dim.__name__)
        inputs.append(TensorSpec(declared.names[i], dtype_name(x.dtype), tuple(dims)))
    return Signature(inputs, [], symbols, None)


def _finite(value: Any, default: int) -> int:
    try:
        return min(int(value), INT64_MAX)
    except (AttributeError, OverflowError, TypeError, ValueError):  # sympy's oo among them
        return default


def source_line(model: torch.nn.Module, key: Key) -> str:
    """file:line of the def behind `key`; "-" where Python cannot tell or it is PyTorch's own
    (an `nn.Linear`: the label names the submodule)."""
    try:
        fn = resolve(model, key)
        where = inspect.getsourcefile(fn)
        if where is None or str(Path(where).resolve()).startswith(_TORCH_DIR):
            return "-"
        return f"{where}:{inspect.getsourcelines(fn)[1]}"
    except (OSError, TypeError):
        return "-"


_TORCH_DIR = str(Path(torch.__file__).resolve().parent) + "/"


def _first_line(e: Exception, limit: int = 400) -> str:
    """`e` on one line; a long message keeps its start and its end (where a failed IREE
    compile names the reproducer it saved)."""
    text = f"{e.construct}: {e.reason}" if hasattr(e, "construct") else str(e)
    text = " ".join(text.split())
    return text if len(text) <= limit else f"{text[:limit - 160]} … {text[-150:]}"
