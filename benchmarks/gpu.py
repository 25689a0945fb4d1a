"""The suite on a CUDA GPU, against eager PyTorch on the same GPU.

    python -m benchmarks.gpu compile DIR [--target h100] [MODEL ...]   # where the compiler is
    python -m benchmarks.gpu run DIR [-o benchmarks/cuda.json]         # where the GPU is
    python -m benchmarks.gpu report [benchmarks/cuda.json]             # BENCHMARKS.md's section

The two halves may run on different machines: `compile` needs iree-base-compiler (any host, no
GPU), `run` needs a GPU, iree-base-runtime (`dync.load`) and torch: with a CUDA build of torch,
eager runs on the GPU; with the CPU build the project pins, eager runs on the CPU, which checks
dync's results on the GPU all the same but makes the timings a comparison with the CPU (the
results and the section say which). `compile` writes,
per model, `DIR/<model>.vmfb` (dync's default pipeline) and `DIR/<model>-nopasses.vmfb` (only
the housekeeping passes), each with its manifest, and the model they were compiled from:
`DIR/<model>.pt`, its state dict (read back with `weights_only=True`: no pickled code), and
`DIR/<model>.json`, its submodules' plain attributes (calibrated thresholds), which `run` sets
on a model built by the suite's code, so that eager runs the same weights and thresholds
whatever torch builds the model there. `run` checks each module against eager PyTorch on the GPU over the model's input set
(η, δ), times both, and measures peak intermediate memory, writing JSON that `report` renders
(and that `python -m benchmarks` keeps in BENCHMARKS.md when it rewrites the file).
"""

from __future__ import annotations

import argparse
import importlib.metadata
import json
import platform
import re
import sys
import time
from pathlib import Path

import torch
from torch.utils import _pytree as pytree

from . import provenance
from .models import SUITE, compile_options, load

RESULTS = Path("benchmarks/cuda.json")
SECTION = "## CUDA"


# --- compile (no GPU needed) ---------------------------------------------------------------

def compile_suite(directory: Path, target: str, names: list[str], say=print) -> None:
    import dync

    from .runner import BASELINE_PASSES

    directory.mkdir(parents=True, exist_ok=True)
    # The GPU machine gets no git checkout: the commit compiled travels with the modules.
    (directory / "commit.txt").write_text(provenance.commit() or "", encoding="utf-8")
    for name in names:
        mod = load(name)
        model, example, dynamic_shapes = mod.build()
        save_model(model, directory / f"{name}.pt")
        for suffix, options in (("", compile_options(mod)),
                                ("-nopasses", {"passes": BASELINE_PASSES})):
            start = time.perf_counter()
            try:
                compiled = dync.compile(model, example, dynamic_shapes=dynamic_shapes,
                                        backend="cuda", target=target, **options)
            except dync.DyncError as e:
                say(f"[gpu] {name}{suffix}: fails: {' '.join(str(e).split())[:300]}")
                (directory / f"{name}{suffix}.error").write_text(str(e), encoding="utf-8")
                continue
            compiled.save(directory / f"{name}{suffix}.vmfb")
            say(f"[gpu] {name}{suffix}: {compiled.report.mode}, "
                f"{compiled.report.dispatches} dispatches, {time.perf_counter() - start:.1f} s")


def save_model(model: torch.nn.Module, path: Path) -> None:
    """`model`'s tensors at `path` and its submodules' plain attributes beside it (.json)."""
    torch.save(model.state_dict(), path)
    plain = {name: {k: v for k, v in vars(m).items()
                    if not k.startswith("_") and isinstance(v, bool | int | float | str)}
             for name, m in model.named_modules()}
    path.with_suffix(".json").write_text(json.dumps(plain), encoding="utf-8")


def load_model(mod, path: Path) -> torch.nn.Module:
    """The model `save_model` wrote: built by the suite's code, its tensors and plain
    attributes then replaced by the saved ones (data only: nothing is unpickled)."""
    model = mod.build()[0]
    model.load_state_dict(torch.load(path, weights_only=True))
    for name, attributes in json.loads(path.with_suffix(".json").read_text("utf-8")).items():
        submodule = model.get_submodule(name)
        for key, value in attributes.items():
            setattr(submodule, key, value)
    return model.eval()


# --- run (on the GPU) ----------------------------------------------------------------------

def _to(device: str, args):
    return pytree.tree_map(lambda t: t.to(device) if isinstance(t, torch.Tensor) else t, args)


def _synchronized(fn, device: str):
    if device == "cpu":
        return fn

    def call(*args):
        out = fn(*args)
        torch.cuda.synchronize()
        return out
    return call


def eager_device() -> str:
    """Where eager PyTorch runs: the GPU when this torch has CUDA, else the CPU."""
    return "cuda" if torch.cuda.is_available() else "cpu"


def run_model(directory: Path, name: str, count: int, timing_inputs: int, repeats: int,
              say=print, device: str | None = None) -> dict:
    import dync
    from dync.differential import InputResult, Verification, _max_error

    from . import memory
    from .timing import median_ms

    mod = load(name)
    row: dict = {"name": name}
    error = directory / f"{name}.error"
    if error.exists():
        row["error"] = "does not compile for CUDA: " + _diagnostic(error.read_text())
        return row

    def model():  # a fresh copy each
        return load_model(mod, directory / f"{name}.pt")

    device = device or eager_device()
    row["eager_device"] = device
    eager_model = model().to(device)
    compiled = dync.load(directory / f"{name}.vmfb", model=model())
    plain_path = directory / f"{name}-nopasses.vmfb"
    plain = dync.load(plain_path, model=model()) if plain_path.exists() else None
    row["mode"] = compiled.report.mode
    row["dispatches"] = compiled.report.dispatches
    row["nopasses_dispatches"] = plain.report.dispatches if plain else None

    inputs = mod.inputs(count)
    check = Verification()
    with torch.no_grad():
        for args in inputs:
            want = _to("cpu", eager_model(*_to(device, args)))
            got = compiled(*args)
            check.results.append(InputResult(_max_error(got, want), mod.decision(want),
                                             mod.decision(got), ()))
    row.update(inputs=len(inputs), eta=check.eta, delta=check.delta)

    timed = inputs[:timing_inputs]
    resident = [_to(device, args) for args in timed]

    def eager_from_host(*args):
        return _to("cpu", eager_model(*_to(device, args)))

    contestants = [eager_from_host, compiled] + ([plain] if plain else [])
    with torch.no_grad():
        eager_resident = median_ms([_synchronized(eager_model, device)], resident, repeats)[0]
        times = median_ms(contestants, timed, repeats)
    row["eager_resident_ms"] = eager_resident
    row["eager_ms"], row["dync_ms"] = times[0], times[1]
    row["nopasses_ms"] = times[2] if plain else None

    if row["mode"] == "in-graph":
        eager_peak, dync_peak = [], []
        for args in inputs[:3]:
            eager_peak.append(memory.eager_peak_intermediates(eager_model, _to(device, args)))
            dync_peak.append(memory.dync_peak(compiled, args))
        row["eager_peak"], row["dync_peak"] = max(eager_peak), max(dync_peak)
    say(f"[gpu] {name}: eta {row['eta']:.3f} delta {row['delta']:.2f} eager "
        f"{row['eager_ms']:.3f} ms (resident {eager_resident:.3f}) dync {row['dync_ms']:.3f} ms")
    return row


def _diagnostic(text: str) -> str:
    """IREE's first diagnostic in a compile error, with the model's source line it names."""
    for line in text.splitlines():
        if line.startswith("loc(") and "): " in line:
            sources = re.findall(r'"[^"]*?(benchmarks/models/[^"]+)":(\d+)', line)
            where = f" at {sources[0][0]}:{sources[0][1]}" if sources else ""
            return line.rsplit("): ", 1)[1].strip() + where
    return " ".join(text.split())[:300]


def run_suite(directory: Path, names: list[str], count: int, timing_inputs: int,
              repeats: int, say=print) -> dict:
    import dync
    from dync.runtime import MANIFEST_SUFFIX

    device = eager_device()
    if device == "cpu":
        say("[gpu] torch here has no CUDA (the CPU build): eager runs on the CPU, so the "
            "timings compare dync on the GPU with eager on the CPU; install a CUDA build of "
            "torch to compare on the GPU")
    # Eager in full float32, as dync's kernels are: PyTorch would run convolutions in TF32.
    torch.backends.cudnn.allow_tf32 = False
    torch.backends.cuda.matmul.allow_tf32 = False
    rows = []
    for name in names:
        try:
            rows.append(run_model(directory, name, count, timing_inputs, repeats, say, device))
        except Exception as e:  # a model that fails is reported, not fatal to the suite
            import traceback
            traceback.print_exc()
            rows.append({"name": name, "error": f"{type(e).__name__}: "
                         + " ".join(str(e).split())[:300]})
    manifests = sorted(directory.glob(f"*{MANIFEST_SUFFIX}"))
    manifest = json.loads(manifests[0].read_text()) if manifests else {}
    return {
        "device": _gpu_name(),
        "eager_device": device,
        "date": time.strftime("%Y-%m-%d"),
        "commit": _read_commit(directory),
        "torch": torch.__version__,
        "iree_runtime": importlib.metadata.version("iree-base-runtime"),
        "dync": dync.__version__,
        "python": platform.python_version(),
        "target": manifest.get("target", "?"),
        "inputs": count, "timing_inputs": timing_inputs, "repeats": repeats,
        "rows": rows,
    }


def _gpu_name() -> str:
    if torch.cuda.is_available():
        return torch.cuda.get_device_name()
    import subprocess
    listed = subprocess.run(["nvidia-smi", "--query-gpu=name", "--format=csv,noheader"],
                            capture_output=True, text=True, check=False).stdout.strip()
    return listed.splitlines()[0] if listed else "an NVIDIA GPU"


def _read_commit(directory: Path) -> str | None:
    path = directory / "commit.txt"
    return (path.read_text(encoding="utf-8").strip() or None) if path.is_file() else None


# --- report ----------------------------------------------------------------------------------

def _cell(value, spec: str) -> str:
    return "—" if value is None or value != value else format(value, spec)


def section(results: dict) -> str:
    """BENCHMARKS.md's CUDA section for `results` (what `run` wrote)."""
    from .timing import geomean

    rows = results["rows"]
    measured = results.get("commit")
    warning = ([f"**Stale**: measured on commit {measured or 'unrecorded'}; dync, its targets or "
                "the benchmarks changed since, so these figures may not describe this code. "
                "Re-run `python -m benchmarks.gpu` on a GPU to refresh them.", ""]
               if provenance.stale(measured) else [])
    on_cpu = results.get("eager_device") == "cpu"
    eager_where = ("on the CPU (that torch had no CUDA, so the timings compare dync on the GPU "
                   "with eager on the CPU)" if on_cpu else "on the same GPU")
    lines = [
        SECTION, "", *warning,
        f"{results['device']}, measured {results['date']} on commit {measured or 'unrecorded'} "
        "with `python -m benchmarks.gpu` "
        f"(modules compiled on the CPU machine for `--target {results['target']}`, run on the "
        f"GPU machine with torch {results['torch']} and iree-base-runtime "
        f"{results['iree_runtime']}, its device created with IREE's caching allocator, as "
        f"`dync.load` does for CUDA). η and δ against eager PyTorch {eager_where} over each "
        f"model's {results['inputs']} inputs; medians "
        f"over the first {results['timing_inputs']} inputs × {results['repeats']} rounds, the "
        "contestants taking turns input by input. Both sides start and end on the host: eager "
        "moves the arguments to the GPU and its results back, dync's call does the same; "
        "\"eager resident\" is eager with arguments already on the GPU and results left there. "
        "Peak memory as in the host table (eager: every CUDA storage an aten op creates; dync: "
        "IREE's CUDA allocator statistics), largest over the first 3 inputs.", "",
        "| model | mode | η | δ | eager ms | eager resident ms | IREE w/o dync's passes ms "
        "| dync ms | dync vs eager | dispatches: passes / none | eager KiB | dync KiB |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        if "error" in r:
            lines.append(f"| {r['name']} | fails: {r['error'][:120]} |" + " |" * 10)
            continue
        speedup = r["eager_ms"] / r["dync_ms"]
        kib = {k: (r[k] / 1024 if k in r else None) for k in ("eager_peak", "dync_peak")}
        lines.append(
            f"| {r['name']} | {r['mode']} | {r['eta']:.3f} | {r['delta']:.2f} | "
            f"{r['eager_ms']:.2f} | {r['eager_resident_ms']:.2f} | "
            f"{_cell(r.get('nopasses_ms'), '.2f')} | {r['dync_ms']:.2f} | {speedup:.2f}× | "
            f"{r['dispatches']} / {_cell(r.get('nopasses_dispatches'), 'd')} | "
            f"{_cell(kib['eager_peak'], '.1f')} | {_cell(kib['dync_peak'], '.1f')} |")
    ran = [r for r in rows if "error" not in r]
    if results.get("merged"):
        lines[2] += (f" The rows of {', '.join(results['merged'])} come from a later run on the "
                     "same kind of machine (`run --merge`), after a fix.")
    lines.append(
        f"| **geo-mean** ({len(ran)}) | | | | | | | | "
        f"**{geomean(r['eager_ms'] / r['dync_ms'] for r in ran):.2f}×** | | | |")
    return "\n".join(lines) + "\n"


def with_section(text: str, results_path: Path = RESULTS) -> str:
    """`text` (BENCHMARKS.md) with its CUDA section replaced by, or ended with, the one
    `results_path` renders; unchanged when there are no results."""
    if not results_path.exists():
        return text
    new = section(json.loads(results_path.read_text(encoding="utf-8")))
    return provenance.replace_section(text, SECTION, new)


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.gpu", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    c = sub.add_parser("compile", help="compile the suite for CUDA into DIR")
    c.add_argument("directory", type=Path)
    c.add_argument("--target", default="h100", help="CUDA target (default h100, sm_90)")
    c.add_argument("models", nargs="*", metavar="MODEL")
    r = sub.add_parser("run", help="run DIR's modules on this machine's GPU")
    r.add_argument("directory", type=Path)
    r.add_argument("models", nargs="*", metavar="MODEL")
    r.add_argument("-o", "--output", type=Path, default=RESULTS)
    r.add_argument("--inputs", type=int, default=100)
    r.add_argument("--timing-inputs", type=int, default=30)
    r.add_argument("--repeats", type=int, default=4)
    r.add_argument("--merge", action="store_true",
                   help="keep OUTPUT's rows of the models not run now")
    p = sub.add_parser("report", help="write BENCHMARKS.md's CUDA section from the results")
    p.add_argument("results", type=Path, nargs="?", default=RESULTS)
    p.add_argument("-o", "--output", type=Path, default=Path("BENCHMARKS.md"))
    args = parser.parse_args()
    names = list(getattr(args, "models", None) or SUITE)
    unknown = sorted(set(names) - set(SUITE))
    if unknown:
        parser.error(f"unknown model(s) {', '.join(unknown)}; the suite has {', '.join(SUITE)}")
    if args.command == "compile":
        compile_suite(args.directory, args.target, names)
    elif args.command == "run":
        results = run_suite(args.directory, names, args.inputs, args.timing_inputs,
                            args.repeats)
        if args.merge and args.output.exists():  # rerun models replace their rows only
            rows = {r["name"]: r for r in json.loads(args.output.read_text())["rows"]}
            rows.update({r["name"]: r for r in results["rows"]})
            results["rows"] = [rows[n] for n in SUITE if n in rows]
            results["merged"] = names
        args.output.parent.mkdir(parents=True, exist_ok=True)
        args.output.write_text(json.dumps(results, indent=1) + "\n", encoding="utf-8")
        sys.stdout.write(section(results))
    else:
        text = args.output.read_text(encoding="utf-8") if args.output.exists() else ""
        args.output.write_text(with_section(text, args.results), encoding="utf-8")


if __name__ == "__main__":
    main()
