"""`dync-opt`: read MLIR, run dync passes and upstream pipelines, print MLIR (for lit tests).

    dync-opt in.mlir --dync-canonicalize --dync-verify
    dync-opt in.mlir --pass-pipeline='builtin.module(dync-canonicalize,canonicalize,dync-verify)'
"""

from __future__ import annotations

import argparse
import sys

from iree.compiler import ir

from .errors import CompilationError
from .passes import parse_pipeline, registry, run_pipeline


def _parser() -> argparse.ArgumentParser:
    passes = registry()
    parser = argparse.ArgumentParser(
        prog="dync-opt",
        description="Run dync passes (and upstream MLIR/IREE pass pipelines) on an MLIR file.",
        epilog="dync passes:\n"
        + "\n".join(f"  --{name:<24} {info.summary}" for name, info in passes.items()),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("input", nargs="?", default="-", help="MLIR file ('-' for stdin)")
    parser.add_argument("-o", "--output", default="-", help="output file ('-' for stdout)")
    parser.add_argument(
        "--pass-pipeline",
        help="textual pipeline mixing dync pass names and upstream passes, "
        "e.g. 'builtin.module(dync-canonicalize,cse)'",
    )
    parser.add_argument(
        "--split-input-file", action="store_true",
        help="process chunks separated by '// -----' independently",
    )
    parser.add_argument(
        "--mlir-print-debuginfo", action="store_true", help="print locations"
    )
    parser.add_argument(
        "--print-generic", action="store_true", help="print ops in generic form"
    )
    for name in passes:
        parser.add_argument(f"--{name}", dest="steps", action="append_const", const=name,
                            help=argparse.SUPPRESS)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    steps = list(args.steps or [])
    if args.pass_pipeline:
        steps += parse_pipeline(args.pass_pipeline)
    text = sys.stdin.read() if args.input == "-" else open(args.input, encoding="utf-8").read()
    chunks = text.split("// -----") if args.split_input_file else [text]
    outputs, failed = [], False
    for chunk in chunks:
        with ir.Context() as ctx:
            ctx.allow_unregistered_dialects = False
            try:
                module = ir.Module.parse(chunk)
                run_pipeline(module, steps)
            except ir.MLIRError as e:
                failed = True
                for d in e.error_diagnostics:
                    print(f"{d.location}: error: {d.message}", file=sys.stderr)
                continue
            except CompilationError as e:
                failed = True
                print(f"error: {e}", file=sys.stderr)
                continue
            outputs.append(
                module.operation.get_asm(
                    enable_debug_info=args.mlir_print_debuginfo,
                    print_generic_op_form=args.print_generic,
                )
            )
    result = "\n// -----\n".join(outputs)
    if args.output == "-":
        sys.stdout.write(result)
    else:
        with open(args.output, "w", encoding="utf-8") as f:
            f.write(result)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
