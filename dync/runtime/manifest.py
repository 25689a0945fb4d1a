"""The JSON manifest saved beside a `.vmfb`: signature, symbols, target, flags, versions.

`sha256` ties the manifest to its vmfb, so a corrupted or swapped module is detected at load.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import shutil
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import ModuleFormatError
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

    def with_files_beside(self, module: Path) -> Manifest:
        """This manifest for a module saved at `module`: the transform spec its flags name is
        copied beside it (`<module>.spec.mlir`) and the flags name the copy."""
        flags = []
        for flag in self.flags:
            name, _, value = flag.partition("=")
            if name == TRANSFORM_SPEC and Path(value).is_file():
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
        }

    @classmethod
    def from_json(cls, data: dict, where: Path) -> Manifest:
        if data.get("format_version") != FORMAT_VERSION:
            raise ModuleFormatError(
                f"{where}: manifest format {data.get('format_version')!r} is not "
                f"{FORMAT_VERSION}; recompile the model with this dync"
            )
        try:
            return cls(
                signature=Signature.from_json(data["signature"]),
                backend=data["backend"],
                target=data["target"],
                driver=data["driver"],
                flags=list(data["flags"]),
                dync_version=data["dync_version"],
                sha256=data["sha256"],
                report=data.get("report", {}),
                entry=data.get("entry", "main"),
                subdnns=list(data.get("subdnns", [])),
                versions=list(data.get("versions", [])),
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
        except (UnicodeDecodeError, json.JSONDecodeError) as e:
            raise ModuleFormatError(f"{path}: manifest is not valid JSON ({e})") from e
        if not isinstance(data, dict):
            raise ModuleFormatError(f"{path}: manifest is not a JSON object")
        return cls.from_json(data, path)
