"""What this CPU is and what it does natively: detected, never assumed.

The machines posttrain runs on are not one CPU. Some are Intel with AVX-512, where a bf16 matmul
runs at a good fraction of fp32's speed; others are AMD EPYC with AVX2 only, where bf16 is
emulated element by element and a matmul is hundreds of times slower than in fp32. CPU flags
alone do not tell (a hypervisor may hide `avx512_bf16` while oneDNN still runs bf16 well on
AVX-512), so the bf16 question is answered by a bounded timing probe:

    bf16_matmul_probe()   -> {"fast": bool, "gflops_fp32", "gflops_bf16", "ratio", "seconds"}
    describe()            -> the CPU record every benchmark JSON carries (model, flags, torch's
                             kernel level, the bf16 probe)

bf16 counts as fast when a bf16 matmul reaches BF16_FAST_RATIO of fp32's throughput on one
thread at 512^3: bf16 on AVX-512 (oneDNN) reaches 0.17-0.19 on the Xeon these tests were written
on, where bf16 training steps still run 2-3x faster than fp32 on two threads; bf16 on AVX2
kernels 0.02 (oneDNN and MKL capped at AVX2 on that Xeon) down to 0.002 (an AVX2-only EPYC).
The probe costs about 50 ms, or a few where bf16 is clearly emulated.
"""

from __future__ import annotations

import functools
import os
import platform
import time

# the flags that decide which kernels run: vector width, bf16/fp16 support, AMX tiles
RELEVANT_FLAGS = (
    "avx",
    "avx2",
    "fma",
    "f16c",
    "avx512f",
    "avx512bw",
    "avx512vl",
    "avx512_vnni",
    "avx512_bf16",
    "avx512_fp16",
    "amx_tile",
    "amx_bf16",
    "amx_int8",
    "avx_vnni",
)
BF16_FAST_RATIO = 0.07
CLEARLY_EMULATED_RATIO = 0.01


@functools.cache
def _cpuinfo() -> dict[str, str]:
    fields: dict[str, str] = {}
    try:
        with open("/proc/cpuinfo") as handle:
            for line in handle:
                if not line.strip():
                    break  # the first processor's block is enough
                key, _, value = line.partition(":")
                fields[key.strip()] = value.strip()
    except OSError:
        pass
    return fields


def model_name() -> str:
    return _cpuinfo().get("model name") or platform.processor() or platform.machine()


def vendor() -> str:
    return _cpuinfo().get("vendor_id", "unknown")


def flags() -> list[str]:
    """The RELEVANT_FLAGS this CPU reports, in that order."""
    present = set(_cpuinfo().get("flags", "").split())
    return [flag for flag in RELEVANT_FLAGS if flag in present]


def torch_capability() -> str | None:
    """The vector kernel level torch dispatches to here ('AVX512', 'AVX2', ...)."""
    try:
        import torch
    except ImportError:
        return None
    return torch.backends.cpu.get_cpu_capability()


def matmul_gflops(size: int, dtype=None, repeats: int = 5, budget_s: float | None = None) -> float:
    """Best-of-`repeats` torch.mm of size x size after a warm-up, in GFLOP/s, on the current
    thread count. With `budget_s`, stops once that much time is spent (at least one timed run),
    so a slow CPU or dtype bounds the time, not the result's meaning."""
    import torch

    dtype = dtype or torch.float32
    a, b = torch.randn(size, size).to(dtype), torch.randn(size, size).to(dtype)
    started = time.perf_counter()
    torch.mm(a, b)  # warm-up
    best = float("inf")
    for _ in range(repeats):
        if budget_s is not None and best < float("inf") and time.perf_counter() - started > budget_s:
            break
        began = time.perf_counter()
        torch.mm(a, b)
        best = min(best, time.perf_counter() - began)
    return 2 * size**3 / best / 1e9


@functools.cache
def bf16_matmul_probe() -> dict:
    """bf16 against fp32 matmul throughput on one thread (a thread that waits for a busy core
    would make the ratio a measure of the load). A 64^3 product first, which costs a few ms
    even emulated and settles the clear case; otherwise 512^3, where the ratio no longer
    depends on the size."""
    import torch

    started = time.perf_counter()
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        size = 64
        fp32, bf16 = matmul_gflops(size, torch.float32, 20), matmul_gflops(size, torch.bfloat16, 3)
        if bf16 / fp32 >= CLEARLY_EMULATED_RATIO:
            size = 512
            fp32, bf16 = matmul_gflops(size, torch.float32, 5), matmul_gflops(size, torch.bfloat16, 3)
    finally:
        torch.set_num_threads(threads)
    ratio = bf16 / fp32
    return {
        "fast": ratio >= BF16_FAST_RATIO,
        "gflops_fp32": round(fp32, 2),
        "gflops_bf16": round(bf16, 3),
        "ratio": round(ratio, 4),
        "size": size,
        "seconds": round(time.perf_counter() - started, 4),
    }


def bf16_is_fast() -> bool:
    return bf16_matmul_probe()["fast"]


def describe() -> dict:
    """The CPU record for a benchmark's JSON."""
    record = {
        "model_name": model_name(),
        "vendor": vendor(),
        "flags": flags(),
        "cores": os.cpu_count(),
        "torch_capability": torch_capability(),
    }
    if record["torch_capability"] is not None:
        record["bf16_matmul"] = bf16_matmul_probe()
    return record


def slow_bf16_warning(what: str) -> str | None:
    """A one-line warning for a bf16 setting on a CPU where bf16 is emulated, or None."""
    if bf16_is_fast():
        return None
    probe = bf16_matmul_probe()
    return (
        f"{what}: bf16 is emulated on this CPU ({model_name()}: bf16 matmul {probe['gflops_bf16']} GFLOP/s "
        f"against {probe['gflops_fp32']} in fp32, {1 / max(probe['ratio'], 1e-9):.0f}x slower); "
        f"fp32 will be much faster here"
    )
