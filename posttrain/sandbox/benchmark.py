"""`posttrain sandbox bench`: the sandbox layer measured side by side with plain subprocess."""

from __future__ import annotations

import os
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

from rich.console import Console

from posttrain.sandbox.bwrap_backend import BwrapSandbox
from posttrain.sandbox.interface import SandboxError, SandboxLimits, SandboxSpec
from posttrain.sandbox.pool import WarmPool


def _percentiles(samples_s: list[float]) -> dict[str, float]:
    ms = sorted(s * 1000 for s in samples_s)
    return {"p50": statistics.median(ms), "p95": ms[min(len(ms) - 1, int(round(0.95 * (len(ms) - 1))))], "n": len(ms)}


def _timed(fn, iterations: int) -> list[float]:
    samples = []
    for _ in range(iterations):
        started = time.perf_counter()
        fn()
        samples.append(time.perf_counter() - started)
    return samples


def _create_exec_close(base: Path) -> None:
    with BwrapSandbox(base_dir=base) as sandbox:
        result = sandbox.exec(["true"])
        if result.exit_code != 0:
            raise SandboxError(f"`true` failed in a sandbox: {result.stderr.strip()}")


def _snapshot_restore(base: Path, megabytes: int, iterations: int) -> dict[str, float]:
    spec = SandboxSpec(limits=SandboxLimits(disk_mb=megabytes + 64))
    with BwrapSandbox(spec, base_dir=base) as sandbox:
        sandbox.exec(f"head -c {megabytes}M /dev/urandom > /app/blob && sync", timeout=120)
        base_id = sandbox.snapshot()

        def cycle() -> None:
            sandbox.snapshot()
            sandbox.restore(base_id)

        samples = _timed(cycle, iterations)
        size_bytes = int(sandbox.exec("stat -c %s /app/blob").stdout.strip())
    return {**_percentiles(samples), "workspace_mb": size_bytes / (1 << 20)}


def _max_idle(base: Path, limit: int, console: Console) -> dict:
    held: list[BwrapSandbox] = []
    stopped_by = f"the --max-idle cap of {limit}"
    started = time.perf_counter()
    try:
        while len(held) < limit:
            try:
                held.append(BwrapSandbox(base_dir=base))
            except (SandboxError, OSError) as exc:
                stopped_by = f"{type(exc).__name__}: {exc}"
                break
            if len(held) % 100 == 0:
                console.print(f"  idle sandboxes held: {len(held)}", highlight=False)
        probe = held[len(held) // 2].exec("echo alive").stdout.strip() if held else ""
        return {
            "count": len(held),
            "stopped_by": stopped_by,
            "probe": probe,
            "seconds_to_create": time.perf_counter() - started,
        }
    finally:
        for sandbox in held:
            sandbox.close()


def run_benchmark(iterations: int = 100, max_idle: int = 1000, console: Console | None = None) -> dict:
    console = console or Console(stderr=True)
    with tempfile.TemporaryDirectory(prefix="posttrain-sbx-bench-") as tmp:
        base = Path(tmp)
        _create_exec_close(base)  # warm: builds the minimal /etc and skeleton once
        console.print("create+exec(true)+close vs subprocess(true) ...", highlight=False)
        # interleaved, so both see the same machine load
        sandbox_s, subprocess_s = [], []
        for _ in range(iterations):
            sandbox_s += _timed(lambda: _create_exec_close(base), 1)
            subprocess_s += _timed(lambda: subprocess.run(["true"], check=True), 1)
        console.print("snapshot+restore ...", highlight=False)
        snap_1 = _snapshot_restore(base, 1, iterations)
        snap_200 = _snapshot_restore(base, 200, iterations)
        console.print("pool hand-out ...", highlight=False)
        spec = SandboxSpec()
        with WarmPool(lambda s: BwrapSandbox(s, base_dir=base), size_per_env=8, max_sandboxes=64) as pool:
            pool.warm(spec)
            handout = []
            for _ in range(iterations):
                deadline = time.time() + 30
                while pool.ready_count(spec) == 0 and time.time() < deadline:
                    time.sleep(0.01)
                started = time.perf_counter()
                sandbox = pool.acquire(spec)
                handout.append(time.perf_counter() - started)
                pool.release(sandbox, spec)
        console.print("idle sandboxes held at once ...", highlight=False)
        idle = _max_idle(base, max_idle, console)
    return {
        "create_exec_close_ms": _percentiles(sandbox_s),
        "subprocess_ms": _percentiles(subprocess_s),
        "overhead_ratio_p50": statistics.median(sandbox_s) / statistics.median(subprocess_s),
        "snapshot_restore_ms": {"1MB": snap_1, "200MB": snap_200},
        "max_idle_sandboxes": idle["count"],
        "max_idle_detail": idle,
        "pool_handout_ms": _percentiles(handout),
        "iterations": iterations,
        "cpus": os.cpu_count(),
    }
