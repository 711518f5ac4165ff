"""Resident memory of the process: its peak, as runs report it, and handing freed heap back.

    peak_rss_mb()        {"peak_rss_mb": this process's peak, "peak_rss_children_mb": the
                         largest peak of its finished, waited-for child processes}
    current_rss_mb()     this process's resident set now (Linux; None elsewhere)
    release_freed_heap() glibc's malloc_trim(0): free pages inside the heap go back to the OS

Why malloc_trim: a training step allocates and frees hundreds of MB of activations and
gradients per micro-batch; glibc keeps freed chunks below its mmap threshold (which grows to
32 MB as large blocks are freed) in the heap, so the resident set stays at the step's peak
between steps, while rollouts run. Trimming returns those pages (benchmarks/long_episode_memory.py
measures how much).
"""

from __future__ import annotations

import ctypes
import ctypes.util
import functools
import os
import resource
import sys


def _to_mb(maxrss: int) -> float:
    # ru_maxrss is in kilobytes on Linux, in bytes on macOS
    return maxrss / 2**20 if sys.platform == "darwin" else maxrss / 1024


def peak_rss_mb() -> dict[str, float]:
    return {
        "peak_rss_mb": round(_to_mb(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss), 1),
        "peak_rss_children_mb": round(_to_mb(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss), 1),
    }


def current_rss_mb() -> float | None:
    try:
        with open("/proc/self/statm") as statm:
            resident_pages = int(statm.read().split()[1])
    except (OSError, IndexError, ValueError):
        return None
    return resident_pages * os.sysconf("SC_PAGE_SIZE") / 2**20


@functools.cache
def _malloc_trim():
    if not sys.platform.startswith("linux"):
        return None
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        trim = libc.malloc_trim  # glibc only: musl and others have no such symbol
    except (OSError, AttributeError):
        return None
    trim.argtypes, trim.restype = [ctypes.c_size_t], ctypes.c_int
    return trim


def release_freed_heap() -> bool:
    """Return freed heap pages to the OS; False where the C library cannot (not glibc)."""
    trim = _malloc_trim()
    if trim is None:
        return False
    trim(0)
    return True
