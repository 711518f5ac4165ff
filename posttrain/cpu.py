"""What this CPU is and what it does natively: detected, never assumed.

The machines posttrain runs on are not one CPU. Some are Intel with AVX-512, where a bf16 matmul
runs at a good fraction of fp32's speed; others are AMD EPYC with AVX2 only, where bf16 is
emulated element by element and a matmul is hundreds of times slower than in fp32. CPU flags
alone do not tell (a hypervisor may hide `avx512_bf16` while oneDNN still runs bf16 well on
AVX-512), so the bf16 question is answered by a bounded timing probe:

    bf16_matmul_probe()   -> {"fast": bool, "gflops_fp32", "gflops_bf16", "ratio", "seconds"}
    describe()            -> the CPU record every benchmark JSON carries (model, flags, torch's
                             kernel level, the bf16 probe)

bf16 counts as fast when a bf16 matmul reaches BF16_FAST_RATIO of fp32's throughput: native or
well-emulated bf16 reaches 0.3-1, element-wise emulation 0.002-0.01. The probe stops after its
first small bf16 product when that one is already too slow, so it costs milliseconds anywhere.
"""

from __future__ import annotations

import functools
import os
import platform
import time

# the flags that decide which kernels run: vector width, bf16/fp16 support, AMX tiles
RELEVANT_FLAGS = ("avx", "avx2", "fma", "f16c", "avx512f", "avx512bw", "avx512vl", "avx512_vnni", "avx512_bf16",
                  "avx512_fp16", "amx_tile", "amx_bf16", "amx_int8", "avx_vnni")
BF16_FAST_RATIO = 0.1


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


def _best_seconds(fn, repeats: int) -> float:
    best = float("inf")
    for _ in range(repeats):
        started = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - started)
    return best


@functools.cache
def bf16_matmul_probe(size: int = 256) -> dict:
    """Time size^3 matmuls in fp32 and bf16 on the current thread count; at most ~0.1 s even
    where bf16 is emulated (one 64^3 product decides that case)."""
    import torch

    started = time.perf_counter()
    a32, b32 = torch.randn(size, size), torch.randn(size, size)
    torch.mm(a32, b32)
    fp32 = 2 * size**3 / _best_seconds(lambda: torch.mm(a32, b32), 20)  # best of many: noise only slows
    small = 64
    a16, b16 = torch.randn(small, small, dtype=torch.bfloat16), torch.randn(small, small, dtype=torch.bfloat16)
    torch.mm(a16, b16)
    bf16 = 2 * small**3 / _best_seconds(lambda: torch.mm(a16, b16), 3)
    if bf16 >= BF16_FAST_RATIO * fp32 / 4:  # plausibly fast: measure at the same size as fp32
        a16, b16 = a32.bfloat16(), b32.bfloat16()
        torch.mm(a16, b16)
        bf16 = 2 * size**3 / _best_seconds(lambda: torch.mm(a16, b16), 5)
    ratio = bf16 / fp32
    return {"fast": ratio >= BF16_FAST_RATIO, "gflops_fp32": round(fp32 / 1e9, 2), "gflops_bf16": round(bf16 / 1e9, 3),
            "ratio": round(ratio, 4), "seconds": round(time.perf_counter() - started, 4)}


def bf16_is_fast() -> bool:
    return bf16_matmul_probe()["fast"]


def describe() -> dict:
    """The CPU record for a benchmark's JSON."""
    record = {"model_name": model_name(), "vendor": vendor(), "flags": flags(), "cores": os.cpu_count(),
              "torch_capability": torch_capability()}
    if record["torch_capability"] is not None:
        record["bf16_matmul"] = bf16_matmul_probe()
    return record


def slow_bf16_warning(what: str) -> str | None:
    """A one-line warning for a bf16 setting on a CPU where bf16 is emulated, or None."""
    if bf16_is_fast():
        return None
    probe = bf16_matmul_probe()
    return (f"{what}: bf16 is emulated on this CPU ({model_name()}: bf16 matmul {probe['gflops_bf16']} GFLOP/s "
            f"against {probe['gflops_fp32']} in fp32, {1 / max(probe['ratio'], 1e-9):.0f}x slower); "
            f"fp32 will be much faster here")
