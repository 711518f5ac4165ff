import time

import pytest

from posttrain.sandbox.interface import SandboxError, SandboxSpec
from posttrain.sandbox.pool import SandboxCap, WarmPool


def wait_for(predicate, seconds=20.0):
    deadline = time.time() + seconds
    while not predicate():
        assert time.time() < deadline, "timed out waiting"
        time.sleep(0.01)


def test_pool_hands_out_ready_sandboxes_fast_and_resets_them(make_sandbox, sandbox_base):
    from posttrain.sandbox.bwrap_backend import BwrapSandbox

    spec = SandboxSpec()
    with WarmPool(lambda s: BwrapSandbox(s, base_dir=sandbox_base), size_per_env=2, max_sandboxes=8) as pool:
        pool.warm(spec)
        wait_for(lambda: pool.ready_count(spec) == 2)
        started = time.perf_counter()
        sandbox = pool.acquire(spec)
        hand_out = time.perf_counter() - started
        started = time.perf_counter()
        BwrapSandbox(spec, base_dir=sandbox_base).close()  # what the pool saves: creating one
        assert hand_out < (time.perf_counter() - started) / 5
        sandbox.exec("echo dirty > /app/x")
        pool.release(sandbox, spec)
        wait_for(lambda: pool.ready_count(spec) == 2)
        again = [pool.acquire(spec) for _ in range(2)]
        for s in again:
            assert s.exec("ls -A /app").stdout == ""  # reset to the clean snapshot
            pool.release(s, spec)


def test_global_cap():
    cap = SandboxCap(2)
    cap.acquire(0)
    cap.acquire(0)
    with pytest.raises(SandboxError, match="all 2 sandbox slots are in use"):
        cap.acquire(0.01)
    cap.release()
    cap.acquire(0)
    with pytest.raises(SandboxError, match="max_sandboxes must be >= 1"):
        SandboxCap(0)


def test_pool_respects_the_cap(make_sandbox, sandbox_base):
    from posttrain.sandbox.bwrap_backend import BwrapSandbox

    spec = SandboxSpec()
    with WarmPool(lambda s: BwrapSandbox(s, base_dir=sandbox_base), size_per_env=0, max_sandboxes=2) as pool:
        held = [pool.acquire(spec), pool.acquire(spec)]
        with pytest.raises(SandboxError, match="slots are in use"):
            pool.acquire(spec, timeout=0.05)
        pool.release(held.pop(), spec)
        held.append(pool.acquire(spec, timeout=1))
        for s in held:
            pool.release(s, spec)
