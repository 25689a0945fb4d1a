"""Backend and target presets, kept as data (`*.toml` beside this file) and read here.

A backend file names its IREE runtime driver, the flags every compile for it needs, and named
presets adding the flags of one device (`jetson-orin`, `h100`, ...).
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass
from functools import cache
from importlib import resources

from ..errors import DyncError


@dataclass(frozen=True)
class Target:
    backend: str
    name: str
    description: str
    driver: str
    flags: tuple[str, ...]
    # The widest vector extension its code may use ("avx512", "avx2", "sse", "neon"), None
    # where unknown (GPUs, a CPU whose features could not be read).
    vector_isa: str | None = None
    # The CPU features (as /proc/cpuinfo names them) its code may use: a CPU lacking one would
    # stop at an illegal instruction, so the runtime refuses to load the module there.
    cpu_features: tuple[str, ...] = ()


@cache
def _backend_data(backend: str) -> dict:
    path = resources.files(__name__) / f"{backend}.toml"
    if not path.is_file():
        raise DyncError(f"unknown backend {backend!r}; choose one of {', '.join(backends())}")
    return tomllib.loads(path.read_text(encoding="utf-8"))


def backends() -> list[str]:
    return sorted(p.name.removesuffix(".toml") for p in resources.files(__name__).iterdir()
                  if p.name.endswith(".toml"))


def allocators(backend: str) -> list[str]:
    """The allocator specs the runtime wraps around `backend`'s device allocator (IREE's
    `create_default_device(allocators=...)`), e.g. ["caching"]."""
    return list(_backend_data(backend).get("allocators", []))


def presets(backend: str) -> dict[str, str]:
    """Preset name -> description for one backend."""
    return {k: v["description"] for k, v in _backend_data(backend)["presets"].items()}


def resolve(backend: str = "llvm-cpu", target: str | None = None) -> Target:
    """The target for `backend` and preset `target` (the backend's default preset if None)."""
    data = _backend_data(backend)
    name = target or data["default"]
    if name not in data["presets"]:
        raise DyncError(
            f"unknown target {name!r} for backend {backend!r}; "
            f"choose one of {', '.join(sorted(data['presets']))}"
        )
    preset = data["presets"][name]
    return Target(
        backend=backend,
        name=name,
        description=preset["description"],
        driver=data["driver"],
        flags=tuple(data["flags"]) + tuple(preset["flags"]),
        vector_isa=host_vector_isa() if preset.get("isa") == "host" else preset.get("isa"),
        cpu_features=host_vector_features() if preset.get("isa") == "host"
        else tuple(preset.get("features", ())),
    )


# /proc/cpuinfo flag -> the vector extension it names, widest first.
_ISA_FLAGS = (("avx512f", "avx512"), ("avx2", "avx2"), ("sse4_2", "sse"), ("asimd", "neon"))


@cache
def host_cpu() -> tuple[str, frozenset[str]]:
    """This machine's CPU model name and feature flags, from /proc/cpuinfo (empty where it
    cannot be read)."""
    import platform

    name, flags = platform.processor() or platform.machine(), frozenset()
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            for line in f:
                key, _, value = line.partition(":")
                if key.strip() == "model name":
                    name = value.strip()
                elif key.strip() in ("flags", "Features"):
                    flags = frozenset(value.split())
    except OSError:
        pass
    return name, flags


# /proc/cpuinfo flags of the vector and bit-manipulation extensions LLVM may use for
# `--iree-llvmcpu-target-cpu=host` (x86: avx*, amx*, fma, f16c, bmi*; Arm's are checked by
# architecture, not feature).
_VECTOR_FEATURE = re.compile(r"(avx|amx)\w*|fma|f16c|bmi[12]")


def host_vector_features() -> tuple[str, ...]:
    """The vector extensions of this machine's CPU that code compiled for it may use."""
    return tuple(sorted(f for f in host_cpu()[1] if _VECTOR_FEATURE.fullmatch(f)))


def missing_cpu_features(features) -> list[str]:
    """Those of `features` this machine's CPU lacks (none where its features cannot be read)."""
    have = host_cpu()[1]
    return sorted(set(features) - have) if have else []


def host_vector_isa() -> str | None:
    """The widest vector extension of this machine's CPU, as `Target.vector_isa` names it."""
    flags = host_cpu()[1]
    return next((isa for flag, isa in _ISA_FLAGS if flag in flags), None)
