"""Keep freed memory in the process instead of handing it back to the kernel.

glibc's malloc serves large requests with mmap and returns them with munmap when freed, so each
decode step's fresh tensors (a [batch, vocab] logits matrix is 25 MB for 128 sequences) come back
as new pages that the kernel faults in and zeroes again: about a tenth of a decode step on this
CPU. Raising malloc's mmap and trim thresholds keeps freed blocks in the heap for the next step
(what vLLM's CPU backend gets by preloading tcmalloc). The cost is that the process's resident
memory stays at its peak; POSTTRAIN_KEEP_FREED_MEMORY=0 leaves malloc as it is.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
import sys

M_TRIM_THRESHOLD = -1  # glibc's mallopt parameter numbers (malloc.h)
M_MMAP_THRESHOLD = -3
THRESHOLD = 1 << 30

_applied: bool | None = None


def keep_freed_memory() -> bool:
    """Set the thresholds once per process; False where the C library is not glibc."""
    global _applied
    if _applied is None:
        _applied = False
        if sys.platform.startswith("linux") and os.environ.get("POSTTRAIN_KEEP_FREED_MEMORY", "1") != "0":
            try:
                libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
                mallopt = libc.mallopt
            except (OSError, AttributeError):
                return False
            mallopt.argtypes, mallopt.restype = [ctypes.c_int, ctypes.c_int], ctypes.c_int
            _applied = bool(mallopt(M_MMAP_THRESHOLD, THRESHOLD)) and bool(mallopt(M_TRIM_THRESHOLD, THRESHOLD))
    return _applied
