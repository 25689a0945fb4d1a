"""Write the IR (and flags) each suite model hands IREE, without running IREE: the check that a
refactoring changed nothing dync compiles.

    python tests/final_ir.py before/        # on the old code
    python tests/final_ir.py after/         # on the new code
    diff -r before/ after/ && echo identical

Each model is compiled with its suite options (`benchmarks.models`) and no cache; the first
module given to IREE (the whole program in graph mode, the sub-DNNs' module in host mode) is
written with its flags as `<model>.mlir`, and the compile stops there. Python's hash seed is
fixed (the script re-runs itself with ``PYTHONHASHSEED=0``): symbol names and set orders that
depend on it would otherwise differ between runs.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


class _Captured(BaseException):
    """Stops the compile at IREE (a BaseException: no fallback of dync.compile catches it)."""


def main(out: Path) -> None:
    sys.path.insert(0, str(ROOT))
    import dync
    from benchmarks import models
    from dync import backend
    from dync.dialects.assembly import module_text

    def capture(session, module):
        session.add_module_flags(module)
        raise _Captured(module_text(module) + "\n// flags: " + " ".join(session.flags) + "\n")

    backend.CompilerSession.compile = capture
    out.mkdir(parents=True, exist_ok=True)
    for name in models.SUITE:
        suite_model = models.load(name)
        model, args, dynamic_shapes = suite_model.build()
        try:
            dync.compile(model, args, dynamic_shapes=dynamic_shapes, cache=False,
                         **models.compile_options(suite_model))
            text = "dync.compile returned without calling IREE\n"
        except _Captured as captured:
            text = str(captured)
        except Exception as e:  # noqa: BLE001 - recorded: a change in the error is a change too
            text = f"error {type(e).__name__}: {e}\n"
        (out / f"{name}.mlir").write_text(text, encoding="utf-8")
        print(f"{name}: {len(text)} characters", flush=True)


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    if os.environ.get("PYTHONHASHSEED") != "0":
        os.execve(sys.executable, [sys.executable, *sys.argv],
                  {**os.environ, "PYTHONHASHSEED": "0"})
    main(Path(sys.argv[1]))
