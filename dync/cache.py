"""The compile cache (Dali's reuse of transformation results): IREE's output for a module of
dync IR, on disk, keyed by that IR, the IREE flags and the compiler version.

The same IR, flags and IREE build give the same `.vmfb`, so a hit is exact. An entry is the
vmfb, its metadata (IREE's statistics, notes of the compile) and the vmfb's SHA-256; an entry whose checksum does not match (a
truncated write, a damaged file) is deleted and rebuilt. Entries are written to a temporary
file and renamed, so concurrent compiles never read half an entry.

Location: ``$DYNC_CACHE_DIR``, else ``$XDG_CACHE_HOME/dync``, else ``~/.cache/dync``;
``DYNC_CACHE=0`` (or ``dync.compile(..., cache=False)``) turns it off.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import json
import os
import tempfile
from pathlib import Path

from iree.compiler import ir

FORMAT = 1


def default_directory() -> Path | None:
    """Where the cache lives, or None when ``DYNC_CACHE=0``."""
    if os.environ.get("DYNC_CACHE", "1") == "0":
        return None
    if "DYNC_CACHE_DIR" in os.environ:
        return Path(os.environ["DYNC_CACHE_DIR"])
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "dync"


def module_key(module: ir.Module | ir.Operation, flags: tuple[str, ...]) -> str:
    """SHA-256 of the module's IR (without locations: they only change messages), the IREE
    flags and the IREE compiler's version."""
    digest = hashlib.sha256()
    for part in (f"dync-cache-{FORMAT}", importlib.metadata.version("iree-base-compiler"),
                 "\0".join(flags)):
        digest.update(part.encode())
        digest.update(b"\0")
    digest.update(module.operation.get_asm(binary=True, enable_debug_info=False))
    return digest.hexdigest()


class CompileCache:
    def __init__(self, directory: Path):
        self.directory = Path(directory)

    def _paths(self, key: str) -> tuple[Path, Path]:
        return self.directory / f"{key}.vmfb", self.directory / f"{key}.json"

    def get(self, key: str) -> tuple[bytes, dict] | None | str:
        """(vmfb, metadata) for `key`; None when absent; "corrupt" when the entry was damaged
        (it is removed)."""
        vmfb_path, meta_path = self._paths(key)
        if not vmfb_path.exists() or not meta_path.exists():
            return None
        try:
            vmfb = vmfb_path.read_bytes()
            meta = json.loads(meta_path.read_text(encoding="utf-8"))
            if meta.get("sha256") != hashlib.sha256(vmfb).hexdigest():
                raise ValueError("checksum mismatch")
            return vmfb, dict(meta.get("metadata", {}))
        except (OSError, ValueError, AttributeError):
            for path in (vmfb_path, meta_path):
                path.unlink(missing_ok=True)
            return "corrupt"

    def put(self, key: str, vmfb: bytes, metadata: dict) -> None:
        """Store an entry (with JSON `metadata`: IREE's statistics, what the compile noted); a
        cache that cannot be written is skipped, never an error."""
        try:
            self.directory.mkdir(parents=True, exist_ok=True)
            vmfb_path, meta_path = self._paths(key)
            _write_atomically(vmfb_path, vmfb)
            meta = {"sha256": hashlib.sha256(vmfb).hexdigest(), "metadata": metadata}
            _write_atomically(meta_path, json.dumps(meta).encode())
        except OSError:
            pass


def _write_atomically(path: Path, data: bytes) -> None:
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=path.name, suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
