"""The IREE stage: dync IR (an in-memory module) -> `.vmfb` bytes.

The module is built in the IREE compiler session's own MLIR context, so it is handed to
`iree.compiler`'s invocation as an object (`import_module`), with no text round trip. Flags
the session refuses because they are process-wide LLVM options (the CPU targets'
``--iree-llvmcpu-number-of-threads``, or any such flag in `extra_flags`) are set in a worker
process instead (`iree_worker.py`), which compiles the module's assembly there: IREE parses
process-wide options once per process, so dync never sets them in its caller's. Either way the
compile stops after IREE's ``flow`` and ``vm`` phases to mend the module for two IREE bugs
(`iree_mends`), then serializes.

When IREE fails, or its worker crashes (ends by a signal), the module and its `iree-compile`
flags are saved for a bug report in one private folder, `crash_directory()`, which the
CompilationError names.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import signal
import stat
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import NoReturn

import iree.compiler
from iree.compiler import ir
from iree.compiler.api import Invocation, Output, Session

from .cache import default_directory, make_private_directory
from .dialects.assembly import module_text
from .dialects.dync_ir import module_flags, read_copied_padding
from .dialects.literals import forget_resource_data
from .dialects.symbolic import element_type
from .dialects.walk import exported, functions
from .errors import CompilationError, FlagError
from .iree_mends import execute_through_vm, nearest_f32_literals
from .runtime.manifest import TRANSFORM_SPEC
from .targets import Target

# Flags every dync compile uses on top of the target's: the input is torch dialect.
COMMON_FLAGS: tuple[str, ...] = ("--iree-input-type=torch",)
# IREE demotes f64 to f32 by default: a float64 input would be read as half as many floats
# and a float64 output returned half-filled (ONNX node tests cast_FLOAT_to_DOUBLE ...).
# Kept where a public function takes or returns f64, as IREE's own CPU test configuration does.
KEEP_F64 = "--iree-input-demote-f64-to-f32=false"
# A failed compile's reproducer prints constants over this many elements (or bytes) as elided.
ELIDE_OVER = 4096
# The reproducers the crash folder keeps, newest first.
KEEP_REPRODUCERS = 20
# What LLVM's option parser says of a flag it refuses (unknown, or a bad value).
_FLAG_REFUSALS = ("Unknown command line argument", "Cannot find option named", " option: ")


def _f64_interface(module: ir.Module) -> bool:
    """Whether a public function of `module` takes or returns an f64 tensor."""
    funcs = functions(module)
    for name in exported(module):
        signature = ir.FunctionType(ir.TypeAttr(funcs[name].attributes["function_type"]).value)
        if any(element_type(t) == "f64" for t in [*signature.inputs, *signature.results]):
            return True
    return False


class CompilerSession:
    """One IREE compiler session: owns the MLIR context the frontends import into."""

    def __init__(self, target: Target, extra_flags: tuple[str, ...] = ()):
        self.target = target
        self.flags = COMMON_FLAGS + target.flags + tuple(extra_flags)
        # IREE's static statistics of the compiled program (dispatch count, transient memory)
        # go to a file per session; they are not part of the flags a user would reproduce.
        fd, self._statistics_path = tempfile.mkstemp(prefix="dync-iree-stats-", suffix=".json")
        os.close(fd)
        self.statistics: dict = {}
        # Of the last compile: `iree_mends.argument_writes` ("" where IREE writes no argument),
        # None where it was not read.
        self.argument_writes: str | None = None
        self._session = Session()
        self._session_flags = [*self.flags, "--iree-scheduling-dump-statistics-format=json",
                               f"--iree-scheduling-dump-statistics-file={self._statistics_path}"]
        # Flags the session refuses: process-wide options, for the worker process to parse.
        self.process_wide: tuple[str, ...] = ()
        try:
            self._session.set_flags(*self._session_flags)
        except ValueError:
            self.process_wide = tuple(f for f in self._session_flags if not self._takes(f))
            self._session_flags = [f for f in self._session_flags if f not in self.process_wide]
        self.context: ir.Context = self._session.context
        self._diagnostics: list[str] = []
        self._handler = self.context.attach_diagnostic_handler(self._on_diagnostic)

    def _takes(self, flag: str) -> bool:
        try:
            self._session.set_flags(flag)
        except ValueError:
            return False
        return True

    def _on_diagnostic(self, d) -> bool:
        if d.severity == ir.DiagnosticSeverity.ERROR:
            self._diagnostics.append(f"{d.location}: {d.message}")
        return True

    def add_module_flags(self, module: ir.Module) -> None:
        """Add the flags `module` asks for (requested by dync's passes: IREE preprocessing for
        dync-channels-last, pad fusion for dync-fuse-padding) to this session's flags."""
        requested = list(module_flags(module))
        if _f64_interface(module):
            requested.append(KEEP_F64)
        else:  # IREE demotes f64 then, truncating literals: round them to nearest first
            with module.context, ir.Location.unknown():
                nearest_f32_literals(module.operation)
        copied = read_copied_padding(module)
        if copied:
            requested.append(f"{TRANSFORM_SPEC}={_write_spec(_keep_padding_spec(copied))}")
        requested = [f for f in requested if f not in self.flags]
        if requested:
            self._session.set_flags(*requested)
            self._session_flags += requested
            self.flags += tuple(requested)

    def compile(self, module: ir.Module) -> bytes:
        """Run IREE's full pipeline on `module` and return the vmfb bytes."""
        self._diagnostics.clear()
        self.argument_writes = None
        self.add_module_flags(module)
        if self.process_wide:
            return self._compile_in_worker(module)
        inv: Invocation = self._session.invocation()
        try:
            inv.import_module(module.operation)
            facts: dict = {}
            serialize = execute_through_vm(self._session, inv, facts)
            if serialize is None:
                self._failed(module, self._diagnostics)
            try:
                out = Output.open_membuffer()
                serialize.output_vm_bytecode(out)
                vmfb = bytes(out.map_memory())
            finally:
                serialize.close()
            self.statistics = _read_statistics(self._statistics_path)
            self.argument_writes = facts.get("argument_writes")
            return vmfb
        finally:
            inv.close()

    def _compile_in_worker(self, module: ir.Module) -> bytes:
        text = module_text(module, debug_info=True)
        with tempfile.TemporaryDirectory(prefix="dync-iree-") as tmp:
            spec = {"process_wide": list(self.process_wide), "flags": self._session_flags,
                    "input": str(Path(tmp, "input.mlir")),
                    "output": str(Path(tmp, "output.vmfb"))}
            Path(spec["input"]).write_text(text, encoding="utf-8")
            spec_path = Path(tmp, "spec.json")
            spec_path.write_text(json.dumps(spec), encoding="utf-8")
            done = subprocess.run([sys.executable, str(Path(__file__).with_name("iree_worker.py")),
                                   str(spec_path)], capture_output=True, text=True,
                                  env=_worker_environment())
            if done.returncode < 0:
                self._crashed(text, -done.returncode, done.stderr)
            result_path = Path(f"{spec_path}.result")
            if done.returncode != 0 or not result_path.exists():
                refused = any(m in done.stderr for m in _FLAG_REFUSALS)
                raise (FlagError if refused else CompilationError)(
                    f"IREE rejected the flags {' '.join(self.process_wide)} or stopped "
                    f"(exit status {done.returncode}): {done.stderr.strip()[-2000:]}")
            result = json.loads(result_path.read_text(encoding="utf-8"))
            if not result["ok"]:
                self._failed(module, result["diagnostics"])
            self.statistics = _read_statistics(self._statistics_path)
            self.recall_argument_writes(result.get("argument_writes"))
            return Path(spec["output"]).read_bytes()

    def recall_argument_writes(self, value: object) -> None:
        """Take `argument_writes` from JSON (a worker's result, a cache entry's meta): anything
        but a string, as from a cache entry written before it, is unknown (arguments copied)."""
        self.argument_writes = value if isinstance(value, str) else None

    def drop_requested_flags(self, flags: list[str]) -> bool:
        """Forget flags a module's passes requested (`add_module_flags`), for a compile
        without them; False where the in-process session has already parsed them (only a
        worker's compile takes its flags afresh)."""
        if not self.process_wide:
            return False
        self.flags = tuple(f for f in self.flags if f not in flags)
        self._session_flags = [f for f in self._session_flags if f not in flags]
        return True

    def _failed(self, module: ir.Module, diagnostics: list[str]) -> NoReturn:
        ordered = innermost_first(diagnostics)
        reason = ordered[0].split(": ", 1)[-1] if ordered else "no diagnostic"
        raise CompilationError(
            f"IREE failed to compile for {self.target.backend}/{self.target.name} ({reason}); "
            f"the IR at the point of failure is in {self._save_failure(module)} (constants over "
            f"{ELIDE_OVER} elements elided)",
            ordered,
        )

    def _save_failure(self, module: ir.Module) -> str:
        """The module, its weights elided (an ImageNet model's would be hundreds of MB, and a
        failure in code generation does not depend on them)."""
        return _save_reproducer("dync-iree-failure-", self._flags_header()
                                + module_text(module, debug_info=True, elide_over=ELIDE_OVER))

    def _crashed(self, text: str, signal_number: int, stderr: str) -> NoReturn:
        """The worker ended by a signal: a bug of IREE's (or the machine's) rather than an
        answer about the program, so the message says so and saves `text`, the module the
        worker was given, with its flags: what an IREE bug report needs."""
        path = _save_reproducer("dync-iree-crash-", self._flags_header() + text)
        raise CompilationError(
            f"the IREE compiler crashed ({_signal_name(signal_number)}) compiling for "
            f"{self.target.backend}/{self.target.name} with the flags {' '.join(self.flags)}; "
            f"a reproducer (the module, its first line the iree-compile flags) is in {path}",
            stderr.strip().splitlines()[-12:],
        )

    def _flags_header(self) -> str:
        return f"// iree-compile flags: {' '.join(self.flags)}\n"

    def close(self) -> None:
        forget_resource_data(self.context)
        self._handler.detach()
        self._session.close()
        if os.path.exists(self._statistics_path):
            os.unlink(self._statistics_path)


def _worker_environment() -> dict[str, str]:
    """This process's environment, where the worker finds iree.compiler where this one did."""
    path = [str(Path(iree.compiler.__file__).parents[2]), os.environ.get("PYTHONPATH")]
    return dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in path if p))


# IREE's messages that only say that something inside failed: the inner diagnostic says what.
_WRAPPERS = ("failed to run translation of source executable", "failed to serialize executable",
             "failed to translate executables", "failed to legalize operation")


def innermost_first(diagnostics: list[str]) -> list[str]:
    """`diagnostics` without repeats (by message), the ones saying what failed before IREE's
    wrappers around them ("failed to run translation of source executable ...")."""
    seen, specific, wrappers = set(), [], []
    for d in diagnostics:
        message = d.split(": ", 1)[-1]
        if message in seen:
            continue
        seen.add(message)
        (wrappers if any(w in message for w in _WRAPPERS) else specific).append(d)
    return specific + wrappers


def crash_directory() -> Path:
    """Where the IR of failed and crashed IREE compiles is saved: `crashes/` in the compile
    cache's directory, else (the cache off, or that folder not creatable) `dync-crashes` in the
    temporary directory; created private to the user (0700), as the cache is. A folder there
    that is not this user's own (another user's, or a link) is passed over for a fresh one."""
    cache = default_directory()
    for directory in ([cache / "crashes"] if cache else []) + [
            Path(tempfile.gettempdir(), "dync-crashes")]:
        try:
            make_private_directory(directory)
            st = directory.lstat()
        except OSError:
            continue
        if stat.S_ISDIR(st.st_mode) and st.st_uid == os.getuid():
            return directory
    return Path(tempfile.mkdtemp(prefix="dync-crashes-"))


def _save_reproducer(prefix: str, text: str) -> str:
    """Write `text` to a new `PREFIX*.mlir` file in `crash_directory()`, which keeps the
    newest `KEEP_REPRODUCERS` files; its path."""
    directory = crash_directory()
    fd, path = tempfile.mkstemp(prefix=prefix, suffix=".mlir", dir=directory)
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        f.write(text)
    saved = sorted(directory.glob("dync-iree-*.mlir"), key=_modified, reverse=True)
    for old in saved[KEEP_REPRODUCERS:]:
        with contextlib.suppress(OSError):
            old.unlink()
    return path


def _modified(path: Path) -> float:
    try:
        return path.stat().st_mtime
    except OSError:
        return 0.0


def _signal_name(number: int) -> str:
    try:
        return signal.Signals(number).name
    except ValueError:
        return f"signal {number}"


def _keep_padding_spec(entries: list[str]) -> str:
    """A transform spec that rewrites the `tensor.pad`s of `entries` (after IREE's input
    conversion each entry point `f` is `util.func @f$async` with its callees inlined) into
    destination-passing style, so that IREE's pad fusion, asked for the module's static entry
    points (`dync-fuse-padding`), leaves these as copies."""
    steps = "".join(
        f'    %f{i} = transform.structured.match ops{{["util.func"]}} attributes '
        f'{{sym_name = "{name}$async"}} in %root : (!transform.any_op) -> !transform.any_op\n'
        f'    %p{i} = transform.structured.match ops{{["tensor.pad"]}} in %f{i} '
        f': (!transform.any_op) -> !transform.any_op\n'
        f'    transform.structured.rewrite_in_destination_passing_style %p{i} '
        f': (!transform.any_op) -> !transform.any_op\n'
        for i, name in enumerate(entries))
    return ("module attributes {transform.with_named_sequence} {\n"
            "  transform.named_sequence @__transform_main("
            "%root: !transform.any_op {transform.readonly}) {\n"
            f"{steps}    transform.yield\n  }}\n}}\n")


def _write_spec(text: str) -> str:
    """`text` in a file named by its hash (the same spec, the same flag: cache keys stay put)."""
    path = Path(tempfile.gettempdir(), "dync-iree-specs",
                hashlib.sha256(text.encode()).hexdigest()[:16] + ".mlir")
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, suffix=".tmp")
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        os.replace(tmp, path)
    return str(path)


def _read_statistics(path: str) -> dict:
    """{"dispatches", "executables", "transient_bytes", ...} from IREE's stream statistics."""
    try:
        with open(path, encoding="utf-8") as f:
            stats = json.load(f)["stream-aggregate"]
    except (OSError, ValueError, KeyError):
        return {}
    execution = stats.get("execution", {})
    return {
        "dispatches": execution.get("dispatch-count", 0),
        "executables": stats.get("executable", {}).get("executable-count", 0),
        "submissions": execution.get("submission-count", 0),
        "transient_bytes": execution.get("transient-memory-size", 0),
        "constant_bytes": stats.get("global", {}).get("constant-size", 0),
    }
