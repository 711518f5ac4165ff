"""The process's resident memory as runs report it, and freed heap handed back to the OS."""

import sys

import pytest

from posttrain.observe.resident_memory import current_rss_mb, peak_rss_mb, release_freed_heap


def test_the_peak_covers_what_the_process_touched():
    before = peak_rss_mb()["peak_rss_mb"]
    block = bytearray(64 * 2**20)  # zero pages: touch them so they are resident
    block[::4096] = b"\x01" * len(block[::4096])
    assert peak_rss_mb()["peak_rss_mb"] >= max(before, current_rss_mb() or 0) - 1
    assert peak_rss_mb()["peak_rss_mb"] >= 64


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="malloc_trim is glibc's")
def test_freed_small_allocations_go_back_to_the_os():
    import ctypes

    if not release_freed_heap():
        pytest.skip("not glibc")
    libc = ctypes.CDLL(None)
    libc.malloc.restype, libc.malloc.argtypes = ctypes.c_void_p, [ctypes.c_size_t]
    libc.free.argtypes = [ctypes.c_void_p]
    # 200 MB in 64 KB blocks: below the mmap threshold, so they live on the heap, whose pages glibc
    # keeps after free() unless trimmed
    blocks = [libc.malloc(64 * 1024) for _ in range(3200)]
    for block in blocks:
        ctypes.memset(block, 1, 64 * 1024)
    for block in blocks[:-1]:  # the last one pins the heap's top: only trimming returns the rest
        libc.free(block)
    held = current_rss_mb()
    assert release_freed_heap()
    assert current_rss_mb() < held - 100
    libc.free(blocks[-1])
