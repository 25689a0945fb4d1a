"""One IREE compile in a process of its own, for flags that are process-wide in IREE.

Some LLVM options IREE's codegen reads (``--iree-llvmcpu-number-of-threads``) are global
command-line options: a compiler session does not take them, and IREE parses them at most
once per process (a second parse aborts it). `dync.backend` runs such compiles through this
script, so that dync never sets them in its caller's process: ``python iree_worker.py
SPEC.json``, where the spec names the process-wide flags, the session flags, the input (MLIR
assembly) and the output. It writes the vmfb to the output and, to ``SPEC.json.result``,
``{"ok": bool, "diagnostics": [str], "argument_writes": str | None}``; an unknown
process-wide flag ends it with LLVM's message on stderr. Run by path, it imports iree.compiler
and, of dync, only its sibling `iree_mends` (which imports nothing of dync; nor does either
import torch).

Test hook: with ``DYNC_TEST_WORKER_SIGNAL=SIGSEGV`` (or another signal's name) in its
environment, the worker kills itself with that signal just before compiling, as a crash in
IREE would end it, so that tests check how dync reports a crashed compiler without a real
crash to hand (tests/test_command_line_errors.py; nothing else sets the variable). It writes
no core file.
"""

import json
import os
import resource
import signal
import sys

from iree.compiler import ir
from iree.compiler.api import Output, Session, Source, ctypes_dl
from iree_mends import execute_through_vm


def main(spec_path: str) -> None:
    with open(spec_path, encoding="utf-8") as f:
        spec = json.load(f)
    ctypes_dl._init_dylib()
    ctypes_dl._initializeGlobalCL("dync", *spec["process_wide"])
    session = Session()
    session.set_flags(*spec["flags"])
    diagnostics: list[str] = []

    def on_diagnostic(d) -> bool:
        if d.severity == ir.DiagnosticSeverity.ERROR:
            diagnostics.append(f"{d.location}: {d.message}")
        return True

    handler = session.context.attach_diagnostic_handler(on_diagnostic)
    inv = session.invocation()
    _crash_if_asked()
    serialize = None
    facts: dict = {}
    if inv.parse_source(Source.open_file(session, spec["input"])):
        serialize = execute_through_vm(session, inv, facts)
    ok = serialize is not None
    if ok:
        out = Output.open_file(spec["output"])
        serialize.output_vm_bytecode(out)
        out.keep()
        out.close()
        serialize.close()
    inv.close()
    handler.detach()
    with open(spec_path + ".result", "w", encoding="utf-8") as f:
        json.dump({"ok": bool(ok), "diagnostics": diagnostics,
                   "argument_writes": facts.get("argument_writes")}, f)


def _crash_if_asked() -> None:
    """The test hook of the module docstring."""
    name = os.environ.get("DYNC_TEST_WORKER_SIGNAL")
    if name:
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
        os.kill(os.getpid(), signal.Signals[name])


if __name__ == "__main__":
    main(sys.argv[1])
