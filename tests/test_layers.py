"""dync's layers point one way (pyproject.toml's import-linter contracts): the compile side's
layers import only downward, the runtime needs neither torch nor the compiler, frontends know
nothing of passes, backend or runtime, and no pass imports another — apart from the listed
arrows still to be moved."""

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_the_import_contracts_hold():
    done = subprocess.run([str(Path(sys.executable).parent / "lint-imports"), "--no-cache"],
                          cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
    assert "0 broken" in done.stdout
