"""Runtime: `CompiledModule` (calls `main` through iree.runtime), `HostModule` (the model's
Python driving sub-DNN entry points), save/load with a manifest."""

from .host import HostModule
from .manifest import MANIFEST_SUFFIX, Manifest
from .module import CompiledModule, load

__all__ = ["MANIFEST_SUFFIX", "CompiledModule", "HostModule", "Manifest", "load"]
