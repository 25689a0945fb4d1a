"""The JSON manifest saved beside a `.vmfb`: signature, symbols, target, flags, versions.

`sha256` ties the manifest to its vmfb, so a corrupted or swapped module is detected at load.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import re
import shutil
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import ModuleFormatError
from ..keywords import Keywords
from ..signature import Signature

MANIFEST_SUFFIX = ".manifest.json"
FORMAT_VERSION = 1


def manifest_path(vmfb_path: Path) -> Path:
    return vmfb_path.with_name(vmfb_path.name.removesuffix(".vmfb") + MANIFEST_SUFFIX)


def digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


# The IREE flag naming dync-fuse-padding's transform spec, a file the compile writes under the
# temp directory: a saved module keeps a copy beside it, so that its flags reproduce the compile.
TRANSFORM_SPEC = "--iree-preprocessing-transform-spec-filename"


@dataclass
class Manifest:
    signature: Signature
    backend: str
    target: str
    driver: str
    flags: list[str]
    dync_version: str
    sha256: str = ""
    report: dict = field(default_factory=dict)
    entry: str = "main"
    # Host mode: the sub-DNN entry points, each {"name", "callable": [submodule, attribute],
    # "signature"}; `entry` is then empty (the host code is the model's own Python).
    subdnns: list[dict] = field(default_factory=list)
    # Shape-specialized versions of `entry` (dync-specialize), each {"function", "symbols":
    # {name: value}}: a call whose symbol values match one runs it instead of `entry`.
    versions: list[dict] = field(default_factory=list)
    # IREE writes none of the module's arguments and returns none (`iree_mends.argument_writes`
    # at compile time): the CPU runtime may hand it the caller's arrays without a copy.
    reads_arguments_only: bool = False
    # The CPU features (/proc/cpuinfo names) the module's code may use (`Target.cpu_features`):
    # the runtime refuses a CPU without one of them rather than stop at an illegal instruction.
    cpu_features: list[str] = field(default_factory=list)
    # The names of the model's parameters its inputs fill, in order (a Python model's forward,
    # up to the example's count): a call may give these by keyword. Empty: by position only.
    parameters: list[str] = field(default_factory=list)

    def with_files_beside(self, module: Path) -> Manifest:
        """This manifest for a module saved at `module`: the transform spec its flags name is
        copied beside it (`<module>.spec.mlir`) and the flags name the copy."""
        flags = []
        for flag in self.flags:
            name, _, value = flag.partition("=")
            # Only a transform spec (.mlir) is copied: a manifest read from elsewhere could
            # name any file, and saving must not copy, say, a key beside the module.
            if name == TRANSFORM_SPEC and value.endswith(".mlir") and Path(value).is_file():
                copy = module.with_suffix(".spec.mlir")
                shutil.copyfile(value, copy)
                flag = f"{TRANSFORM_SPEC}={copy.resolve()}"
            flags.append(flag)
        report = dict(self.report)
        if "flags" in report:
            report["flags"] = flags
        return dataclasses.replace(self, flags=flags, report=report)

    def to_json(self) -> dict:
        return {
            "format_version": FORMAT_VERSION,
            "dync_version": self.dync_version,
            "entry": self.entry,
            "backend": self.backend,
            "target": self.target,
            "driver": self.driver,
            "flags": self.flags,
            "sha256": self.sha256,
            "signature": self.signature.to_json(),
            "report": self.report,
            "subdnns": self.subdnns,
            "versions": self.versions,
            "reads_arguments_only": self.reads_arguments_only,
            "cpu_features": self.cpu_features,
            "parameters": self.parameters,
        }

    @classmethod
    def from_json(cls, data: dict, where: Path | str) -> Manifest:
        """The manifest `to_json` wrote, checked field by field (it may come from someone
        else: nothing in it is evaluated); a `ModuleFormatError` naming `where` otherwise."""
        if not isinstance(data, dict):
            raise ModuleFormatError(f"{where}: manifest is not a JSON object")
        if data.get("format_version") != FORMAT_VERSION:
            raise ModuleFormatError(
                f"{where}: manifest format {data.get('format_version')!r:.40} is not "
                f"{FORMAT_VERSION}; recompile the model with this dync"
            )
        try:
            texts = {key: data[key] for key in ("backend", "target", "driver", "dync_version",
                                                "sha256")}
            entry = data.get("entry", "main")
            flags = data["flags"]
            report = data.get("report", {})
            reads_only = data.get("reads_arguments_only", False)
            if not isinstance(reads_only, bool):
                raise TypeError("reads_arguments_only is not a bool")
            features = _list(data.get("cpu_features", []))
            if not all(isinstance(f, str) and _FEATURE.fullmatch(f) for f in features):
                raise ValueError(f"cpu_features {features!r:.80} are not CPU feature names")
            parameters = _list(data.get("parameters", []))
            if not all(isinstance(p, str) and p.isidentifier() for p in parameters):
                raise ValueError(f"parameters {parameters!r:.80} are not Python names")
            if not all(isinstance(v, str) for v in [*texts.values(), entry]) \
                    or not isinstance(flags, list) or not all(isinstance(f, str) for f in flags) \
                    or not isinstance(report, dict):
                raise TypeError("a field has the wrong type")
            signature = Signature.from_json(data["signature"], str(where))
            return cls(
                signature=signature,
                flags=list(flags),
                report=report,
                entry=entry,
                subdnns=[_subdnn(d, where) for d in _list(data.get("subdnns", []))],
                versions=[_version(v, signature, where) for v in _list(data.get("versions", []))],
                reads_arguments_only=reads_only,
                cpu_features=list(features),
                parameters=list(parameters),
                **texts,
            )
        except (KeyError, TypeError, ValueError) as e:
            raise ModuleFormatError(f"{where}: malformed manifest ({type(e).__name__}: {e})") from e

    def write(self, path: Path) -> None:
        path.write_text(json.dumps(self.to_json(), indent=2) + "\n", encoding="utf-8")

    @classmethod
    def read(cls, path: Path) -> Manifest:
        if not path.is_file():
            raise ModuleFormatError(
                f"no manifest at {path}; dync.load needs the manifest that save() writes "
                "beside the .vmfb (a bare .vmfb can still be run with iree-run-module)"
            )
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError, RecursionError) as e:
            # (RecursionError: nested deeper than Python's stack, as a crafted file may be)
            raise ModuleFormatError(f"{path}: manifest is not valid JSON ({e})") from e
        if not isinstance(data, dict):
            raise ModuleFormatError(f"{path}: manifest is not a JSON object")
        return cls.from_json(data, path)


_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_$.]*", re.ASCII)
# A sub-DNN replaces an attribute of one of the model's submodules: a method or `forward`,
# never a dunder (which would reach into Python's machinery).
_ATTRIBUTE = re.compile(r"(?!__)[A-Za-z_][A-Za-z0-9_]*", re.ASCII)
_QUALIFIED = re.compile(r"(?:[A-Za-z0-9_]+(?:\.[A-Za-z0-9_]+)*)?", re.ASCII)
_FEATURE = re.compile(r"[a-z0-9_]{1,40}", re.ASCII)  # as /proc/cpuinfo names them


def _list(value) -> list:
    if not isinstance(value, list):
        raise TypeError(f"expected a list, got {type(value).__name__}")
    return value


def _function_name(value) -> str:
    if not isinstance(value, str) or not _NAME.fullmatch(value):
        raise ValueError(f"{value!r:.60} is not a function name")
    return value


def _version(data, signature: Signature, where) -> dict:
    """A `versions` entry: {"function", "symbols": {name: int}[, "sizes": [name],
    "host_padding": bool]} over the signature's symbols."""
    if not isinstance(data, dict) or not isinstance(data.get("symbols"), dict):
        raise TypeError("a version is not {function, symbols}")
    _function_name(data.get("function"))
    for name, value in data["symbols"].items():
        if name not in signature.symbols or not isinstance(value, int) or isinstance(value, bool):
            raise ValueError(f"version {data['function']}: symbol {name!r:.40} = {value!r:.40}")
    sizes = data.get("sizes", [])
    if not isinstance(sizes, list) or not all(s in data["symbols"] for s in sizes):
        raise ValueError(f"version {data['function']}: sizes {sizes!r:.60}")
    if not isinstance(data.get("host_padding", False), bool):
        raise TypeError(f"version {data['function']}: host_padding is not a bool")
    return data


def _subdnn(data, where) -> dict:
    """A host-mode `subdnns` entry: {"name", "callable": [submodule, attribute], "signature"
    [, "versions"][, "keywords"]}."""
    if not isinstance(data, dict):
        raise TypeError("a sub-DNN entry is not an object")
    _function_name(data.get("name"))
    target = data.get("callable")
    if not (isinstance(target, list) and len(target) == 2 and isinstance(target[0], str)
            and isinstance(target[1], str) and _QUALIFIED.fullmatch(target[0])
            and _ATTRIBUTE.fullmatch(target[1])):
        raise ValueError(f"sub-DNN {data['name']}: callable {target!r:.80} is not "
                         "[submodule, method]")
    signature = Signature.from_json(data.get("signature"), f"{where} (sub-DNN {data['name']})")
    for version in _list(data.get("versions", [])):
        _version(version, signature, where)
    if "keywords" in data:
        keywords = Keywords.from_json(data["keywords"])
        if len(keywords.tensors) != len(signature.inputs):
            raise ValueError(f"sub-DNN {data['name']}: {len(keywords.tensors)} tensor parameters "
                             f"for {len(signature.inputs)} inputs")
    return data
