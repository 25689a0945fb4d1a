"""The compile cache (Dali's reuse of transformation results), on disk, at two levels:

* `model_key`: the whole compiled module (vmfb and manifest) of a PyTorch model, keyed before
  import by everything the compile reads (see there), so an unchanged model skips torch.export,
  rewriting, the passes and IREE;
* `module_key`: IREE's output for a module of dync IR, keyed by that IR, the IREE flags and the
  compiler version, for models the first key cannot describe and for ONNX models.

The same IR, flags and IREE build give the same `.vmfb`, so a hit is exact. An entry is the
vmfb and a JSON record: its metadata (IREE's statistics, notes of the compile; for a model
entry, the manifest), the format, dync and IREE versions that wrote it, the vmfb's SHA-256
and a SHA-256 over the record. An entry that fails any check (a truncated write, an edited
file, another version) is deleted and compiled again; nothing read from an entry is run as
code (a manifest's shape expressions are parsed by `dync.shape_expr`). Entries are written
to a temporary file and renamed, so concurrent compiles never read half an entry; the
directory is created private to the user (0700).

Trust: a cache is a store of compiled machine code, so share one only between users who
trust each other's compiles, as with any build cache. The checksums detect damage and edits
that do not recompute them; they are not signatures.

Location: ``$DYNC_CACHE_DIR``, else ``$XDG_CACHE_HOME/dync``, else ``~/.cache/dync``;
``DYNC_CACHE=0`` (or ``dync.compile(..., cache=False)``) turns it off.
"""

from __future__ import annotations

import functools
import hashlib
import importlib.metadata
import json
import os
import tempfile
import types
import weakref
from pathlib import Path

from iree.compiler import ir

from .version import __version__

FORMAT = 2


def default_directory() -> Path | None:
    """Where the cache lives, or None when ``DYNC_CACHE=0``."""
    if os.environ.get("DYNC_CACHE", "1") == "0":
        return None
    if "DYNC_CACHE_DIR" in os.environ:
        return Path(os.environ["DYNC_CACHE_DIR"])
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "dync"


def module_key(module: ir.Module | ir.Operation, flags: tuple[str, ...],
               cpu_features: tuple[str, ...] = ()) -> str:
    """SHA-256 of the module's IR (without locations: they only change messages), the IREE
    flags, the CPU features the code may use (`--iree-llvmcpu-target-cpu=host` means another
    CPU on another machine sharing the cache), the IREE compiler's version and the source of
    the mends dync applies between IREE's phases (`iree_mends.py`: a changed mend changes the
    vmfb of the same IR)."""
    digest = hashlib.sha256()
    for part in (f"dync-cache-{FORMAT}", importlib.metadata.version("iree-base-compiler"),
                 "\0".join(flags), " ".join(cpu_features), _mends_digest()):
        digest.update(part.encode())
        digest.update(b"\0")
    digest.update(module.operation.get_asm(binary=True, enable_debug_info=False))
    return digest.hexdigest()


@functools.cache
def _mends_digest() -> str:
    return hashlib.sha256(Path(__file__).with_name("iree_mends.py").read_bytes()).hexdigest()


class CompileCache:
    """Entries on disk, each checking itself (as ccache's and pip's caches do): a vmfb and a
    JSON record of the formats and versions that wrote it, the vmfb's SHA-256, the metadata,
    and a SHA-256 over all of that. `get` serves an entry only when every check holds; any
    other entry (damaged, edited, malformed, or written by another dync or IREE) is removed
    and reported as a miss, so the caller compiles again and overwrites it."""

    def __init__(self, directory: Path):
        self.directory = Path(directory)

    def _paths(self, key: str) -> tuple[Path, Path]:
        return self.directory / f"{key}.vmfb", self.directory / f"{key}.json"

    def get(self, key: str) -> tuple[bytes, dict] | None | str:
        """(vmfb, metadata) for `key`; None when absent; else why the entry was not served
        (it is removed): "damaged: ..." or "from another version: ..."."""
        vmfb_path, meta_path = self._paths(key)
        if not vmfb_path.exists() or not meta_path.exists():
            return None
        try:
            vmfb = vmfb_path.read_bytes()
            record = json.loads(meta_path.read_text(encoding="utf-8"))
            problem = _check_record(record, vmfb)
        except (OSError, UnicodeDecodeError, ValueError, RecursionError) as e:
            problem = f"damaged: {type(e).__name__}"  # (RecursionError: nested past the stack)
        if problem is None:
            return vmfb, dict(record["metadata"])
        self.discard(key)
        return problem

    def discard(self, key: str) -> None:
        """Remove the entry for `key` (one whose contents its reader rejected)."""
        for path in self._paths(key):
            path.unlink(missing_ok=True)

    def put(self, key: str, vmfb: bytes, metadata: dict) -> None:
        """Store an entry (with JSON `metadata`: IREE's statistics, what the compile noted); a
        cache that cannot be written is skipped, never an error."""
        try:
            make_private_directory(self.directory)
            vmfb_path, meta_path = self._paths(key)
            _write_atomically(vmfb_path, vmfb)
            record = {**_versions(), "vmfb_sha256": hashlib.sha256(vmfb).hexdigest(),
                      "metadata": metadata}
            record["sha256"] = _record_digest(record)
            _write_atomically(meta_path, json.dumps(record).encode())
        except OSError:
            pass


def make_private_directory(path: Path) -> None:
    """Create `path` (and its parents) readable and writable by this user alone."""
    path.mkdir(mode=0o700, parents=True, exist_ok=True)


def _versions() -> dict:
    return {"format": FORMAT, "dync": __version__,
            "iree": importlib.metadata.version("iree-base-compiler")}


def _record_digest(record: dict) -> str:
    body = {k: v for k, v in record.items() if k != "sha256"}
    return hashlib.sha256(json.dumps(body, sort_keys=True).encode()).hexdigest()


def _check_record(record, vmfb: bytes) -> str | None:
    """Why `record` (an entry's JSON) and `vmfb` may not be served, or None."""
    if not isinstance(record, dict) or not isinstance(record.get("metadata"), dict):
        return "damaged: not an entry"
    if record.get("sha256") != _record_digest(record):
        return "damaged: its record does not match its checksum"
    if record.get("vmfb_sha256") != hashlib.sha256(vmfb).hexdigest():
        return "damaged: its vmfb does not match its checksum"
    versions = _versions()
    changed = [f"{k} {record.get(k)!r:.20} -> {v!r}" for k, v in versions.items()
               if record.get(k) != v]
    if changed:
        return "from another version: " + ", ".join(changed)
    return None


def _write_atomically(path: Path, data: bytes) -> None:
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=path.name, suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


class Opaque(Exception):
    """The model holds state a key cannot see: it is not looked up before import."""


def model_key(model, args, dynamic_shapes, options: dict) -> str | None:
    """A key for compiling a PyTorch `model`, computed *before* import, so that an unchanged
    model skips torch.export, rewriting and the passes too. It covers: each submodule's class
    and non-tensor attributes, parameters and buffers (bytes), the example inputs (bytes), the
    `Dim` specs, the compile options, the source of every Python file outside the interpreter's
    own directories (the model's code and whatever helpers it imports) and of dync itself,
    the code of each submodule class's methods and the module-level values they read (a class
    typed at a prompt or in a notebook cell has no file to hash, and a global the forward reads
    can change between two compiles in one process), and the torch and IREE versions. None
    when the model has forward hooks, attributes or globals that are not plain data, or
    classes without a source file: then only the IR-level key applies."""
    try:
        digest = hashlib.sha256()
        for part in _model_parts(model, args, dynamic_shapes, options):
            digest.update(part if isinstance(part, bytes) else str(part).encode())
            digest.update(b"\0")
        return "model-" + digest.hexdigest()
    except Opaque:
        return None


def _model_parts(model, args, dynamic_shapes, options: dict):
    import inspect
    import sys

    import torch

    yield f"dync-model-cache-{FORMAT}"
    yield importlib.metadata.version("iree-base-compiler")
    yield torch.__version__
    yield json.dumps(options, sort_keys=True, default=str)
    yield _plain(dynamic_shapes)
    for a in args:
        yield _plain(a)
    internal = set(vars(torch.nn.Module()))
    for name, module in model.named_modules():
        cls = type(module)
        if module._forward_hooks or module._forward_pre_hooks:
            raise Opaque(f"{name}: forward hooks")
        try:
            inspect.getsourcefile(cls)
        except TypeError as e:
            raise Opaque(f"{cls.__qualname__} has no source file") from e
        yield f"{name}:{cls.__module__}.{cls.__qualname__}"
        yield from _class_code(cls)
        for key, value in sorted(vars(module).items()):
            if key in internal and key != "training":
                continue
            yield f"{key}={_plain(value)}"
        for key, tensor in list(module._parameters.items()) + list(module._buffers.items()):
            yield f"{key}={_plain(tensor)}"
    for path in _source_files(sys.modules.values()):
        yield path
        yield _file_digest(path)


# path -> (mtime in ns, size, SHA-256 of the contents): a process hashes each source file once
# until it changes. Without it the key cost grew with every module loaded (a benchmark process
# that had run torch.compile held thousands of generated .py files: 15 s per key).
_DIGESTS: dict[str, tuple[int, int, str]] = {}


def _file_digest(path: str) -> str:
    stat = os.stat(path)
    known = _DIGESTS.get(path)
    if known is not None and known[:2] == (stat.st_mtime_ns, stat.st_size):
        return known[2]
    digest = hashlib.sha256(Path(path).read_bytes()).hexdigest()
    _DIGESTS[path] = (stat.st_mtime_ns, stat.st_size, digest)
    return digest


# A module's __file__ -> its resolved path if it is user (or dync) source, else None.
_USER_SOURCE: dict[str, str | None] = {}


def _source_files(modules) -> list[str]:
    """The .py files of loaded modules that are not part of Python or an installed package,
    plus dync's own."""
    files = set()
    for module in list(modules):
        file = getattr(module, "__file__", None)
        if file and file.endswith(".py") and (path := _user_path(file)) and os.path.isfile(path):
            files.add(path)
    files.update(str(p) for p in _DYNC_DIR.rglob("*.py"))
    return sorted(files)


_DYNC_DIR = Path(__file__).resolve().parent


def _user_path(file: str) -> str | None:
    """`file` resolved if it is user (or dync) source, None if it is Python's or an installed
    package's."""
    if file not in _USER_SOURCE:
        import site
        import sys
        import sysconfig

        system = {Path(p).resolve() for p in (
            sys.prefix, sys.base_prefix, sysconfig.get_paths()["stdlib"],
            *site.getsitepackages(), site.getusersitepackages())}
        path = Path(file).resolve()
        user = path.is_relative_to(_DYNC_DIR) or not any(path.is_relative_to(s) for s in system)
        _USER_SOURCE[file] = str(path) if user else None
    return _USER_SOURCE[file]


def _class_code(cls) -> list[str]:
    """The code of `cls`'s own methods and of the classes it derives from outside torch, with
    the module-level values they read (`_code`)."""
    import torch

    parts = []
    for klass in cls.__mro__:
        if klass is torch.nn.Module or klass.__module__.startswith(("torch.", "builtins")):
            continue
        for name, member in sorted(vars(klass).items()):
            function = getattr(member, "__func__", member)  # staticmethod, classmethod
            if callable(function) and hasattr(function, "__code__"):
                parts.append(f"{klass.__qualname__}.{name}:{_code(function, set())}")
    return parts


def _code(function, seen: set) -> str:
    """A digest of `function`'s bytecode, constants, closure and the globals it reads:
    functions it calls are followed, modules and classes named, anything else must be plain
    data (`_plain`, else `Opaque`)."""
    import marshal

    code = function.__code__
    if code in seen:
        return "recursive"
    seen.add(code)
    digest = hashlib.sha256(marshal.dumps(code))
    cells = [c.cell_contents for c in function.__closure__ or () if _filled(c)]
    scope = function.__globals__
    reads = [scope[n] for n in sorted(_names(code)) if n in scope]  # a set: its order varies
    for value in cells + reads:
        if hasattr(value, "__code__") and _is_user_code(value.__code__.co_filename):
            digest.update(_code(value, seen).encode())
        elif isinstance(value, type | types.ModuleType | types.BuiltinFunctionType) or \
                hasattr(value, "__code__"):  # a library's: its version is in the key
            digest.update(f"{getattr(value, '__module__', '')}.{value.__qualname__}".encode()
                          if not isinstance(value, types.ModuleType) else value.__name__.encode())
        else:
            digest.update(_plain(value).encode())
    return digest.hexdigest()


def _is_user_code(filename: str) -> bool:
    """Whether code from `filename` is the user's (a prompt, a notebook cell, a file outside
    Python's and the installed packages' directories), not a library's."""
    return not os.path.isfile(filename) or _user_path(filename) is not None


def _names(code) -> set[str]:
    """The global names `code` and the code objects nested in it (comprehensions, lambdas)
    load."""
    names = set(code.co_names)
    for const in code.co_consts:
        if hasattr(const, "co_names"):
            names |= _names(const)
    return names


def _filled(cell) -> bool:
    try:
        cell.cell_contents  # noqa: B018 - an empty cell raises
    except ValueError:
        return False
    return True


def _plain(value) -> str:
    import torch

    if value is None or isinstance(value, bool | int | float | str | torch.dtype | torch.device):
        return repr(value)
    if isinstance(value, torch.Tensor):
        data = value.detach().cpu().contiguous()
        raw = data.reshape(-1).view(torch.uint8).numpy().tobytes() if data.numel() else b""
        return f"tensor({data.dtype},{tuple(data.shape)},{hashlib.sha256(raw).hexdigest()})"
    if isinstance(value, tuple | list):
        return f"{type(value).__name__}[" + ",".join(_plain(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ",".join(f"{_plain(k)}:{_plain(v)}"
                              for k, v in sorted(value.items(), key=lambda kv: repr(kv[0]))) + "}"
    if isinstance(value, weakref.ReferenceType):  # e.g. nn.GRU's _flat_weight_refs
        return f"ref({_plain(value())})"
    if hasattr(value, "__name__") and hasattr(value, "min") and hasattr(value, "max"):
        return f"Dim({value.__name__},{value.min},{value.max})"  # torch.export.Dim
    if hasattr(value, "root") and hasattr(value, "fn"):  # a derived Dim such as 2*h
        return f"Derived({value!r},{_plain(value.root)})"
    raise Opaque(f"attribute of type {type(value).__name__}")
