"""`dync-opt`: read MLIR, run dync passes and upstream pipelines, print MLIR (for lit tests).

    dync-opt in.mlir --dync-canonicalize --dync-check-ir
    dync-opt in.mlir --pass-pipeline='builtin.module(dync-canonicalize,canonicalize,dync-check-ir)'
    dync-opt --list-attributes      # the dync.* attributes: where, what, who writes and reads
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

from iree.compiler import ir

from .cli import writable
from .dialects import attributes
from .errors import CompilationError, DyncError
from .passes import parse_pipeline, registry, run_pipeline

_BYTECODE_MAGIC = b"ML\xefR"

_SEPARATOR = re.compile(r"^[ \t]*// -----[ \t]*$", re.MULTILINE)


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
    parser.add_argument(
        "--list-attributes", action="store_true",
        help="print the dync IR's attributes (where each sits, what it holds, which passes "
        "write and read it) as a Markdown table, and exit",
    )
    for name in passes:
        parser.add_argument(f"--{name}", dest="steps", action="append_const", const=name,
                            help=argparse.SUPPRESS)
    return parser


def _read_input(name: str) -> str:
    """The MLIR assembly in file `name` ('-': standard input), or a DyncError saying why there
    is none: a missing or unreadable file, or one that is not UTF-8 text (a binary file)."""
    shown = "standard input" if name == "-" else name
    try:
        data = sys.stdin.buffer.read() if name == "-" else Path(name).read_bytes()
    except OSError as e:
        raise DyncError(f"cannot read {shown}: {e.strerror or e}") from None
    if data.startswith(_BYTECODE_MAGIC):
        raise DyncError(f"cannot read {shown}: it is MLIR bytecode; dync-opt reads MLIR assembly")
    if b"\0" in data:
        raise DyncError(f"cannot read {shown}: a binary file (it holds NUL bytes), "
                        "not MLIR assembly")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise DyncError(f"cannot read {shown}: not UTF-8 text (byte 0x{data[e.start]:02x} at "
                        f"offset {e.start}), so not MLIR assembly") from None
    # The newlines a file opened as text gives (as before: `// -----` splits on them).
    return text.replace("\r\n", "\n").replace("\r", "\n")


def _write_output(name: str, text: str) -> None:
    if name == "-":
        sys.stdout.write(text)
        return
    try:
        Path(name).write_text(text, encoding="utf-8")
    except OSError as e:
        raise DyncError(f"cannot write the output {name}: {e.strerror or e}") from None


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    try:
        return _run(args)
    except DyncError as e:
        print(f"dync-opt: error: {e}", file=sys.stderr)
        return 1


def _run(args: argparse.Namespace) -> int:
    if args.list_attributes:
        _write_output(args.output, attributes.table() + "\n")
        return 0
    steps = list(args.steps or [])
    if args.pass_pipeline:
        steps += parse_pipeline(args.pass_pipeline)
    text = _read_input(args.input)
    if args.output != "-":
        writable(args.output)  # before the passes run, not after
    # As mlir-opt: a separator is a line of its own, so `// -----` inside a CHECK comment
    # does not split.
    chunks = _SEPARATOR.split(text) if args.split_input_file else [text]
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
    _write_output(args.output, "\n// -----\n".join(outputs))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
