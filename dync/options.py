"""`CompileOptions`: what `dync.compile` takes besides the model and its example, checked and
normalized once, then shared by every stage (import, passes, IREE, the first call, host mode)."""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, fields, replace
from typing import Any

from . import targets
from .errors import OptionError
from .passes import DEFAULT_PIPELINE, with_required_passes

MODES = ("auto", "graph", "host")
THREADS_FLAG = "--iree-llvmcpu-number-of-threads="
MAX_THREADS = 256


@dataclass(frozen=True)
class CompileOptions:
    """See `dync.compile` for each field. `normalized` checks them and puts them in one form:
    the target resolved, tuples for sequences, sizes sorted."""

    backend: str = "llvm-cpu"
    target: str | None = None
    mode: str = "auto"
    passes: tuple[str, ...] = DEFAULT_PIPELINE
    extra_flags: tuple[str, ...] = ()
    dump_ir: str | None = None
    trace_branches: bool = False
    specialize: bool | Mapping[str, tuple[int, ...]] | None = None
    buckets: Mapping[str, tuple[int, ...]] | None = None
    cache: bool | str = True
    check_first_call: bool = True
    eager_if_faster: bool = True
    threads: int = 1
    resolved: targets.Target | None = field(default=None, compare=False, repr=False)

    @classmethod
    def normalized(cls, *, onnx: bool = False, **given: Any) -> CompileOptions:
        """The options `given` (`dync.compile`'s keywords, None for a default), checked and
        in one form, for an ONNX model (`onnx`) or a PyTorch one."""
        unknown = sorted(set(given) - ({f.name for f in fields(cls)} - {"resolved"}))
        if unknown:
            raise OptionError(f"unknown compile option(s): {', '.join(unknown)}")
        raw = cls(**{k: v for k, v in given.items() if v is not None})
        if raw.mode not in MODES:
            raise OptionError(f"mode must be one of {', '.join(MODES)}, got {raw.mode!r}")
        if raw.mode == "host" and onnx:
            raise OptionError("mode='host' runs a PyTorch model's own Python; an ONNX model is "
                              "one graph")
        if raw.trace_branches and onnx:
            raise OptionError("trace_branches records the branches of a PyTorch forward")
        if raw.dump_ir is not None and os.path.isdir(raw.dump_ir):
            raise OptionError(f"dump_ir names a directory, {os.fspath(raw.dump_ir)}: give the "
                              f"file to write the IR to, e.g. "
                              f"{os.path.join(os.fspath(raw.dump_ir), 'model.mlir')}")
        resolved = _with_threads(targets.resolve(raw.backend, raw.target), raw.threads)
        return replace(
            raw, backend=resolved.backend, target=resolved.name,
            passes=with_required_passes(raw.passes),
            extra_flags=tuple(raw.extra_flags),
            dump_ir=None if raw.dump_ir is None else os.fspath(raw.dump_ir),
            specialize=raw.specialize if raw.specialize is None or isinstance(raw.specialize, bool)
            else _sizes(raw.specialize),
            buckets=None if raw.buckets is None else _sizes(raw.buckets),
            cache=raw.cache if isinstance(raw.cache, bool) else os.fspath(raw.cache),
            resolved=resolved)

    def cache_key(self) -> dict:
        """The options a compiled model depends on, for the compile cache's model key."""
        return {"backend": self.backend, "target": self.target, "mode": self.mode,
                "passes": list(self.passes), "extra_flags": list(self.extra_flags),
                "trace_branches": self.trace_branches,
                "specialize": self.specialize
                if self.specialize is None or isinstance(self.specialize, bool)
                else {k: list(v) for k, v in self.specialize.items()},
                "buckets": None if self.buckets is None
                else {k: list(v) for k, v in self.buckets.items()},
                "check_first_call": self.check_first_call,
                "eager_if_faster": self.eager_if_faster, "threads": self.threads,
                # `target="host"` names another CPU on each machine sharing the cache
                "cpu_features": list(self.resolved.cpu_features) if self.resolved else []}


def _with_threads(target: targets.Target, threads: Any) -> targets.Target:
    """`target` run on `threads` CPU threads: one (its own, IREE's local-sync device) or more
    (IREE's local-task device, each dispatch's code distributed for that many)."""
    if isinstance(threads, bool) or not isinstance(threads, int) or not 1 <= threads <= MAX_THREADS:
        raise OptionError(f"threads must be an int from 1 to {MAX_THREADS}, got {threads!r}")
    if threads == 1:
        return target
    if target.backend != "llvm-cpu":
        raise OptionError(f"threads={threads}: only llvm-cpu modules run on more than one "
                          f"thread (the {target.backend} backend runs on its device)")
    flags = tuple(f for f in target.flags if not f.startswith(THREADS_FLAG))
    return replace(target, driver="local-task", flags=(*flags, f"{THREADS_FLAG}{threads}"))


def _sizes(sizes: Mapping[str, Sequence[int]]) -> dict[str, tuple[int, ...]]:
    return {name: tuple(sorted(values)) for name, values in sizes.items()}
