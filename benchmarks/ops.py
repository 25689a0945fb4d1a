"""`python -m benchmarks ops [--batch 1,8] [--isa native|avx2] [--any-size] [--only SUBSTRING] [-o BENCHMARKS.md]`:
the kernels of deployed networks one at a time — the convolutions of ResNet-50 and MobileNet-v2,
the matmuls and attention products of BERT-base (its FFN also as a decoder step: compiled for a
dynamic batch of 1 to 8 rows, timed at batch 1 and 8), and convolutions compiled for images of any
height and width (a resolution-adaptive network's; `--any-size`, a section of its own) — in GFLOP/s for eager PyTorch, dync's defaults
and IREE alone, all on one thread, with the machine's reach (eager's 2048³ sgemm) beside them.

"IREE alone" is what a user gets from IREE without dync: the op exported with `torch.export`,
imported by IREE's own `fx_importer`, compiled by `iree.compiler` with only the device flags
and `--iree-llvmcpu-target-cpu`, run on `local-sync`.

`--isa avx2` measures an AVX2 machine on an AVX-512 one: dync and IREE generate code for
`x86-64-v3`, and eager's oneDNN and MKL are held to AVX2 (`ONEDNN_MAX_CPU_ISA`,
`MKL_ENABLE_INSTRUCTIONS`, set in a child process before torch loads them).
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from .isa import CHOICES, TARGET, code_for, rerun_held_to

SECTION = "## Kernels"
# BENCHMARKS.md's section for each `--isa`.
HEADINGS = {"native": SECTION, "avx2": f"{SECTION} (AVX2)"}
# `--any-size`'s: the convolutions compiled for images of any height and width.
ANY_SIZE = " over any H × W"


@dataclass(frozen=True)
class Op:
    name: str
    family: str
    make: Callable[[int], tuple]  # batch -> (module, example input)
    gflop: Callable[[int], float]
    # Compiled for images of any height and width (the example's size is the one timed).
    any_size: bool = False
    # Compiled for a dynamic number of rows in this range (a decoder step over a batch).
    rows: tuple[int, int] | None = None

    def dynamic_shapes(self):
        from torch.export import Dim

        if self.rows is not None:
            return ({0: Dim("rows", min=self.rows[0], max=self.rows[1])},)
        if not self.any_size:
            return None
        return ({2: Dim("h", min=16, max=512), 3: Dim("w", min=16, max=512)},)


def _conv(cin: int, cout: int, k: int, size: int, stride: int = 1, groups: int = 1) -> tuple:
    def make(batch: int):
        import torch

        module = torch.nn.Conv2d(cin, cout, k, stride=stride, padding=k // 2, groups=groups,
                                 bias=False)
        return module.eval(), torch.randn(batch, cin, size, size)

    def gflop(batch: int) -> float:
        out = (size + 2 * (k // 2) - k) // stride + 1
        return 2 * batch * cout * out * out * (cin // groups) * k * k / 1e9

    return make, gflop


def _linear(tokens: int, din: int, dout: int) -> tuple:
    def make(batch: int):
        import torch

        return torch.nn.Linear(din, dout).eval(), torch.randn(batch * tokens, din)

    return make, lambda batch: 2 * batch * tokens * din * dout / 1e9


def _attention(heads: int, tokens: int, width: int) -> tuple:
    """Attention's two batched products (Q·Kᵀ, then P·V) and the softmax between them."""
    def make(batch: int):
        import torch

        class Attention(torch.nn.Module):
            def forward(self, q):
                p = torch.softmax(q @ q.transpose(-1, -2), dim=-1)
                return p @ q

        return Attention(), torch.randn(batch, heads, tokens, width)

    return make, lambda batch: 2 * 2 * batch * heads * tokens * tokens * width / 1e9


def _ops() -> list[Op]:
    resnet = "ResNet-50 conv"
    mobile = "MobileNet-v2 conv"
    bert = "BERT-base (128 tokens)"
    convs = [
        ("stem 7×7/2 3→64 @224", resnet, _conv(3, 64, 7, 224, 2)),
        ("1×1 64→64 @56", resnet, _conv(64, 64, 1, 56)),
        ("3×3 64→64 @56", resnet, _conv(64, 64, 3, 56)),
        ("1×1 64→256 @56", resnet, _conv(64, 256, 1, 56)),
        ("3×3/2 128→128 @56", resnet, _conv(128, 128, 3, 56, 2)),
        ("3×3 128→128 @28", resnet, _conv(128, 128, 3, 28)),
        ("1×1 512→128 @28", resnet, _conv(512, 128, 1, 28)),
        ("1×1/2 512→1024 @28", resnet, _conv(512, 1024, 1, 28, 2)),
        ("3×3 256→256 @14", resnet, _conv(256, 256, 3, 14)),
        ("1×1 1024→256 @14", resnet, _conv(1024, 256, 1, 14)),
        ("3×3 512→512 @7", resnet, _conv(512, 512, 3, 7)),
        ("1×1 2048→512 @7", resnet, _conv(2048, 512, 1, 7)),
        ("depthwise 3×3 32 @112", mobile, _conv(32, 32, 3, 112, groups=32)),
        ("depthwise 3×3 144 @56", mobile, _conv(144, 144, 3, 56, groups=144)),
        ("depthwise 3×3 576 @14", mobile, _conv(576, 576, 3, 14, groups=576)),
        ("1×1 144→24 @56", mobile, _conv(144, 24, 1, 56)),
        ("1×1 96→576 @14", mobile, _conv(96, 576, 1, 14)),
    ]
    matmuls = [
        ("Q/K/V/out projection 768→768", bert, _linear(128, 768, 768)),
        ("FFN up 768→3072", bert, _linear(128, 768, 3072)),
        ("FFN down 3072→768", bert, _linear(128, 3072, 768)),
        ("attention QKᵀ·V, 12 heads", bert, _attention(12, 128, 64)),
    ]
    step = "Decoder step over a dynamic batch of 1–8 rows (BERT-base widths)"
    steps = [
        ("FFN up 768→3072, rows 1–8", step, _linear(1, 768, 3072)),
        ("FFN down 3072→768, rows 1–8", step, _linear(1, 3072, 768)),
    ]
    adaptive = "Resolution-adaptive conv (any H × W)"
    any_size = [
        ("3×3 64→64 @56", adaptive, _conv(64, 64, 3, 56)),
        ("1×1 64→256 @56", adaptive, _conv(64, 256, 1, 56)),
        ("3×3/2 128→128 @56", adaptive, _conv(128, 128, 3, 56, 2)),
        ("3×3 128→128 @28", adaptive, _conv(128, 128, 3, 28)),
        ("3×3 32→32 @96", adaptive, _conv(32, 32, 3, 96)),
    ]
    return ([Op(name, family, make, gflop) for name, family, (make, gflop) in convs + matmuls]
            + [Op(name, family, make, gflop, rows=(1, 8)) for name, family, (make, gflop) in steps]
            + [Op(name, family, make, gflop, any_size=True)
               for name, family, (make, gflop) in any_size])


OPS = _ops()


@dataclass
class Row:
    op: Op
    batch: int
    eager_ms: float = float("nan")
    dync_ms: float = float("nan")
    iree_ms: float = float("nan")
    dync_compile_s: float = float("nan")
    error: str = ""

    def gflops(self, ms: float) -> float:
        return self.op.gflop(self.batch) / ms * 1e3


def _iree_alone(module, example, cpu: str, dynamic_shapes=None):
    """The op compiled by IREE without dync (see the module's docstring); a callable."""
    import iree.compiler as compiler
    import iree.runtime as runtime
    import torch
    from iree.compiler.extras.fx_importer import FxImporter

    importer = FxImporter()
    importer.import_frozen_program(torch.export.export(module, (example,),
                                                       dynamic_shapes=dynamic_shapes))
    vmfb = compiler.compile_str(
        str(importer.module_op), input_type="torch", target_backends=["llvm-cpu"],
        extra_args=[f"--iree-llvmcpu-target-cpu={cpu}"])
    config = runtime.Config("local-sync")
    context = runtime.SystemContext(config=config)
    context.add_vm_module(runtime.VmModule.copy_buffer(context.instance, vmfb))
    main = context.modules.module["main"]
    return lambda x: main(x.numpy()).to_host()


def measure(op: Op, batch: int, isa: str, flags: tuple[str, ...] = (), say=print) -> Row:
    import torch

    import dync
    from dync.differential import disagreement

    from .timing import median_ms

    row = Row(op, batch)
    torch.manual_seed(0)
    module, example = op.make(batch)
    # A dynamic row count is compiled on an example of more than one row (torch.export
    # specializes a dim of size 1).
    traced = example if op.rows is None else example.new_zeros(
        max(2, op.rows[1] // 2), *example.shape[1:])
    try:
        start = time.perf_counter()
        compiled = dync.compile(module, (traced,), target=TARGET[isa], mode="graph",
                                dynamic_shapes=op.dynamic_shapes(), extra_flags=flags)
        row.dync_compile_s = time.perf_counter() - start
        iree = _iree_alone(module, traced, TARGET[isa], op.dynamic_shapes())
    except Exception as e:  # noqa: BLE001 - a kernel that does not compile is a row, not a stop
        row.error = " ".join(str(e).split())[:200]
        say(f"[ops] {op.name} batch {batch}: {row.error}")
        return row
    with torch.no_grad():
        want = module(example)
        for got in (compiled(example), torch.from_numpy(iree(example))):
            problem = disagreement(got, want)
            if problem:
                row.error = f"wrong result: {problem}"
                return row
        once = median_ms([module], [(example,)], 1)[0]
        repeats = max(5, min(50, int(600 / max(once, 1e-3))))
        row.eager_ms, row.dync_ms, row.iree_ms = median_ms(
            [module, compiled, iree], [(example,)], repeats)
    say(f"[ops] {op.name} batch {batch}: eager {row.gflops(row.eager_ms):.1f}, "
        f"dync {row.gflops(row.dync_ms):.1f}, IREE alone {row.gflops(row.iree_ms):.1f} GFLOP/s")
    return row


def reach() -> float:
    """The machine's reach on one thread, in GFLOP/s: eager's best 2048×2048 sgemm."""
    import torch

    a, b = torch.randn(2048, 2048), torch.randn(2048, 2048)
    torch.mm(a, b)
    best = min(_timed(lambda: torch.mm(a, b)) for _ in range(5))
    return 2 * 2048**3 / best / 1e9


def _timed(fn) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def heading(isa: str, any_size: bool) -> str:
    return HEADINGS[isa] + (ANY_SIZE if any_size else "")


def section(rows: list[Row], isa: str, peak: float, any_size: bool = False) -> str:
    import torch

    from .provenance import host_cpu, stamp

    code = code_for(isa)
    command = f"python -m benchmarks ops --isa {isa}" + (" --any-size" if any_size else "")
    lines = [heading(isa, any_size), "",
             f"Measured on {stamp()} with `{command}`. Host CPU: "
             f"{host_cpu()}; code for {code}; **one thread** for every contestant (torch "
             f"{torch.__version__} with `torch.set_num_threads(1)`, IREE `local-sync`). "
             f"The machine's reach on one thread (eager's 2048³ sgemm): **{peak:.0f} GFLOP/s**. "
             "Medians of alternating calls; each result checked against eager first."
             + (" dync and IREE alone compile each convolution for any height and width "
                "(`Dim`s of 16 to 512); the example's size is the one timed." if any_size
                else ""), "",
             "| kernel | batch | GFLOP | eager GFLOP/s | dync GFLOP/s | dync / eager "
             "| IREE alone GFLOP/s |",
             "|---|---:|---:|---:|---:|---:|---:|"]
    family = None
    for row in rows:
        if row.op.family != family:
            family = row.op.family
            lines.append(f"| **{family}** | | | | | | |")
        gflop = row.op.gflop(row.batch)
        if row.error:
            lines.append(f"| {row.op.name} | {row.batch} | {gflop:.2f} | | | "
                         f"{row.error.replace('|', '/')} | |")
            continue
        eager, ours, iree = (row.gflops(ms) for ms in (row.eager_ms, row.dync_ms, row.iree_ms))
        lines.append(f"| {row.op.name} | {row.batch} | {gflop:.2f} | {eager:.1f} | {ours:.1f} | "
                     f"{ours / eager:.2f} | {iree:.1f} |")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m benchmarks ops", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--batch", default="1,8", help="batch sizes, comma-separated (default 1,8)")
    parser.add_argument("--isa", choices=CHOICES, default="native",
                        help="native: the code IREE makes for this CPU; avx2: an AVX2 machine")
    parser.add_argument("--any-size", action="store_true",
                        help="the convolutions compiled for any H x W instead (their own "
                        "section)")
    parser.add_argument("--only", default="", metavar="SUBSTRING",
                        help="only the kernels whose name contains this")
    parser.add_argument("--flags", default="", metavar="'FLAG ...'",
                        help="extra IREE flags for dync (a candidate's measurement)")
    parser.add_argument("-o", "--output", type=Path, default=None, metavar="BENCHMARKS.md",
                        help="put the table into this file as its '## Kernels' (or '## Kernels "
                        "(AVX2)') section")
    args = parser.parse_args(argv)
    rerun_held_to(args.isa, "ops", argv)

    import torch

    from .provenance import write_section

    torch.set_num_threads(1)
    batches = [int(b) for b in args.batch.split(",")]
    flags = tuple(args.flags.split())
    rows = [measure(op, batch, args.isa, flags) for op in OPS
            if args.only in op.name and op.any_size == args.any_size for batch in batches]
    text = section(rows, args.isa, reach(), args.any_size)
    if args.output:
        write_section(args.output, heading(args.isa, args.any_size), text)
    print(text)


if __name__ == "__main__":
    main()
