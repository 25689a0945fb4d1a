"""The compile report: what dync did to a model, as attributes, text and JSON."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field


@dataclass
class Report:
    frontend: str = ""
    # "in-graph" (one entry function), "host" (the model's Python driving sub-DNNs) or
    # "eager" (`mode="auto"` found nothing it could compile: the model runs as written).
    mode: str = "in-graph"
    backend: str = ""
    target: str = ""
    flags: list[str] = field(default_factory=list)
    passes: list[str] = field(default_factory=list)
    symbols: dict[str, list[int]] = field(default_factory=dict)
    # dync-rdp's coverage: {"static", "symbolic", "unknown"} tensor dims, and op counts per
    # SoD² class (host mode: summed over the sub-DNNs).
    rdp: dict = field(default_factory=dict)
    # Seconds per stage, in order: import, passes, iree.
    stage_seconds: dict[str, float] = field(default_factory=dict)
    # Each region run as Python instead of compiled (host mode, eager): {region, stage (the
    # stage that failed: capture, passes, iree, first call), construct, source (file:line of
    # the user's code, "-" when unknown), reason (the internal message)}.
    graph_breaks: list[dict] = field(default_factory=list)
    # The sub-DNNs. In-graph: the functions `dync-split-subdnns` outlined, {name, source,
    # ops, calls, arguments, results}; host mode: the entry points the model's Python calls,
    # {name, callable, calls, inputs}.
    subdnns: list[dict] = field(default_factory=list)
    # dync-plan-buffers' predicted peak of intermediate memory per call, in bytes: "formula"
    # (its arena plan), "iree" (what IREE 3.13's own packing reaches), "min"/"max" over the
    # symbols' ranges; formulas over the entry's symbols.
    peak: dict = field(default_factory=dict)
    # dync-plan-execution's segments (runs of ops free to trade places, with at least two that
    # make tensors): {"segments", "reordered" (given a lower-peak order), "exact" (searched
    # exhaustively)}; host mode: summed over the sub-DNNs.
    execution: dict = field(default_factory=dict)
    # Shape-specialized versions of the entry (dync-specialize): {function, symbols}.
    versions: list[dict] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    vmfb_bytes: int = 0
    # IREE's static statistics of the final module: dispatches, executables, submissions,
    # transient_bytes (the stream allocator's packed transient memory), constant_bytes.
    iree: dict = field(default_factory=dict)
    # How a call hands its arguments to IREE: "imported" (the caller's memory, on the CPU:
    # IREE writes none), "copied: <why>" (the op that may write one), "copied" (not analysed).
    arguments: str = ""
    # The compile cache: "hit", "hit (model)", "miss", "rebuilt (the entry was ...)" when an
    # entry failed its checks, or "off".
    cache: str = ""
    # Rewritten forward functions (qualified name -> readable generated source).
    rewritten: dict[str, str] = field(default_factory=dict)
    # Compiled with `trace_branches`: the sites of the module's branch-trace output.
    branch_sites: list[str] = field(default_factory=list)

    @property
    def dispatches(self) -> int | None:
        """Device dispatches in the final module (IREE's count), None if unknown."""
        return self.iree.get("dispatches")

    def to_json(self) -> dict:
        return asdict(self)

    @classmethod
    def from_json(cls, data: dict) -> Report:
        """The report a manifest carries; a field of the wrong type (a damaged or foreign
        manifest: the report is informational) is left at its default."""
        defaults = cls()
        known = {k: v for k, v in data.items() if k in cls.__dataclass_fields__
                 and type(v) is type(getattr(defaults, k))}
        return cls(**known)

    def __str__(self) -> str:
        lines = [
            f"dync report: {self.frontend} -> {self.backend} ({self.target}), "
            f"{self.vmfb_bytes} bytes of vmfb",
            "  symbols: "
            + (", ".join(f"{k} in [{lo}, {hi}]" for k, (lo, hi) in self.symbols.items()) or "none"),
            "  passes: " + (", ".join(self.passes) or "none"),
            "  stages: " + ", ".join(f"{k} {v:.2f}s" for k, v in self.stage_seconds.items()),
            f"  compile cache: {self.cache or '-'}",
            f"  mode: {self.mode}",
            "  rdp: " + (_coverage(self.rdp) if self.rdp else "not run"),
            "  predicted peak (bytes): " + (f"{self.peak['formula']} (IREE's packing: "
                                            f"{self.peak['iree']}; {self.peak['min']} to "
                                            f"{self.peak['max']})" if self.peak else "not run"),
            "  execution order: " + (f"{self.execution.get('reordered', 0)} of "
                                     f"{self.execution.get('segments', 0)} segments reordered"
                                     if self.execution else "not planned"),
            "  module: " + (", ".join(f"{k} {v}" for k, v in self.iree.items()) or "-"),
            f"  arguments: {self.arguments or '-'}",
            "  versions: " + (", ".join(
                f"{v['function']} ({', '.join(f'{k}={x}' for k, x in v['symbols'].items())})"
                for v in self.versions) or "none"),
            f"  graph breaks: {len(self.graph_breaks)}",
            "  rewritten: " + (", ".join(self.rewritten) or "nothing"),
            "  IREE flags: " + " ".join(self.flags),
        ]
        lines += [f"    {_graph_break(b)}" for b in self.graph_breaks]
        lines += [_subdnn(d) for d in self.subdnns]
        lines += [f"  note: {n}" for n in self.notes]
        return "\n".join(lines)


    def explain(self) -> str:
        """What was compiled and what runs as Python, and why: one entry per graph break
        with the stage that failed, the user's file:line, the construct and the internal
        reason (after torch._dynamo's `explain`)."""
        compiled = {"in-graph": "the whole program, one graph",
                    "host": f"{len(self.subdnns)} sub-DNN(s) called from the model's Python",
                    "eager": "nothing: the model runs in eager PyTorch"}.get(self.mode, self.mode)
        lines = [f"dync explain: mode {self.mode}; compiled: {compiled}; "
                 f"{len(self.graph_breaks)} graph break(s)"]
        for i, b in enumerate(self.graph_breaks, 1):
            lines.append(f"  graph break {i}: {b['region']} runs as Python")
            lines.append(f"    stage:     {b.get('stage') or 'capture'}")
            lines.append(f"    where:     {b.get('source') or '-'}")
            if b.get("construct"):
                lines.append(f"    construct: {b['construct']}")
            lines.append(f"    reason:    {b['reason']}")
        lines += [_subdnn(d) for d in self.subdnns if "callable" in d]
        return "\n".join(lines)


def _graph_break(b: dict) -> str:
    stage = f" at {b['stage']}" if b.get("stage") else ""
    return f"{b['region']} runs as Python ({b.get('source') or '-'}{stage}): {b['reason']}"


def _coverage(rdp: dict) -> str:
    total = sum(rdp.get(k, 0) for k in ("static", "symbolic", "unknown")) or 1
    dims = ", ".join(f"{rdp.get(k, 0)} {k} ({100 * rdp.get(k, 0) / total:.1f}%)"
                     for k in ("static", "symbolic", "unknown"))
    classes = ", ".join(f"{k} {v}" for k, v in rdp.get("classes", {}).items())
    return f"{dims} tensor dims; ops by class: {classes or 'none'}"


def _subdnn(d: dict) -> str:
    if "callable" in d:
        return (f"  sub-DNN {d['name']}: {d['callable']}({', '.join(d['inputs'])}), "
                f"{d['calls']} calls in the example")
    per_sample = f", per sample of {d['per_sample']}" if d.get("per_sample") else ""
    return (f"  sub-DNN {d['name']} ({d['source']}): {d['ops']} ops, {d['calls']} call sites, "
            f"({', '.join(d['arguments'])}) -> ({', '.join(d['results'])}){per_sample}")
