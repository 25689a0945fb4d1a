"""glibc's malloc kept from returning large blocks to the system, for IREE's `local-task` device.

IREE 3.13's `local-task` device (`dync.compile(..., threads=N)`, N > 1) allocates each call's
transient memory with `malloc` and frees it at the end of the call: its queue allocations do
not go through the caching allocator `local-sync` modules get (targets/llvm-cpu.toml). glibc
serves a block over 32 MiB with a fresh `mmap` and returns it with `munmap`, so every call
maps its transients anew, faults in every page inside its dispatches and unmaps them again: a
BERT-base self-attention over 512 tokens, 72 MB of transients, one 2.6 ms `munmap` per call
(`strace -c`), its copies and packs twice as slow as on one thread; the whole call 33 ms at 2
threads against 25 at one. With `mallopt(M_MMAP_MAX, 0)` (large blocks from the heap) and a
trim threshold of 2 GiB (freed memory kept for the next call), 18 ms; BERT-base DeeBERT,
12 layers, 512 tokens, 637 -> 385 ms (`python -m benchmarks realistic --threads 2`).

This is process-wide: the first `local-task` module a process loads sets it, and from then on
memory the process frees stays in it (up to 2 GiB at the top of the heap) for its next
allocations, instead of going back to the system. ``DYNC_KEEP_MALLOC=1`` in the environment
leaves malloc as it is. Not glibc (musl, macOS): nothing is done.
"""

from __future__ import annotations

import ctypes
import functools
import os
import platform

# glibc's mallopt parameters (malloc.h).
M_TRIM_THRESHOLD = -1
M_MMAP_MAX = -4
# The most mallopt takes (an int): free memory at the top of the heap kept up to this much.
TRIM_THRESHOLD = 2**31 - 1
OPT_OUT = "DYNC_KEEP_MALLOC"


@functools.cache
def keep_large_blocks() -> bool:
    """Tune glibc's malloc as the module docstring says, once per process (two threads racing
    here set the same two parameters twice); whether it is so tuned (False: not glibc, opted
    out, or mallopt refused)."""
    if os.environ.get(OPT_OUT) == "1" or platform.libc_ver()[0] != "glibc":
        return False
    try:
        libc = ctypes.CDLL(None)
        mallopt = libc.mallopt
    except (OSError, AttributeError):
        return False
    mallopt.argtypes = [ctypes.c_int, ctypes.c_int]
    mallopt.restype = ctypes.c_int
    return bool(mallopt(M_MMAP_MAX, 0)) and bool(mallopt(M_TRIM_THRESHOLD, TRIM_THRESHOLD))
