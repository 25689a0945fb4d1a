# lit configuration for dync: every pass has a FileCheck test file under lit/.
import os
import shutil
import sys

import lit.formats

config.name = "dync"
config.test_format = lit.formats.ShTest(execute_external=False)
config.suffixes = [".mlir", ".py"]
config.test_source_root = os.path.dirname(__file__)
config.excludes = ["lit.cfg.py", "Output"]

bin_dir = os.path.dirname(sys.executable)
config.environment["PATH"] = bin_dir + os.pathsep + config.environment.get("PATH", os.environ["PATH"])
for tool in ("dync-opt", "filecheck"):
    if shutil.which(tool, path=config.environment["PATH"]) is None:
        lit_config.fatal(f"{tool} not found next to {sys.executable}; pip install -e '.[test]'")
config.substitutions.append(("%PYTHON", sys.executable))
# The `filecheck` package provides FileCheck's behaviour under this name.
config.substitutions.append(("FileCheck", "filecheck"))
