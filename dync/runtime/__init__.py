"""Runtime: `CompiledModule` (calls `main` through iree.runtime), save/load with a manifest."""

from .manifest import MANIFEST_SUFFIX, Manifest
from .module import CompiledModule, load

__all__ = ["MANIFEST_SUFFIX", "CompiledModule", "Manifest", "load"]
