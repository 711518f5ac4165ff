"""A warm pool of ready sandboxes per environment, under a global cap on live sandboxes.

Hand-out pops a sandbox that was created (and snapshotted clean) in the background; return
restores that clean snapshot, an O(1) overlay operation, and puts it back.
"""

from __future__ import annotations

import hashlib
import json
import threading
from collections import defaultdict, deque
from collections.abc import Callable
from dataclasses import asdict

from posttrain.sandbox.interface import Sandbox, SandboxError, SandboxSpec


def spec_key(spec: SandboxSpec) -> str:
    data = asdict(spec)
    data["limits"] = spec.limits.model_dump()
    return hashlib.sha256(json.dumps(data, sort_keys=True, default=str).encode()).hexdigest()[:16]


class SandboxCap:
    """At most `limit` sandboxes alive at once across the process."""

    def __init__(self, limit: int) -> None:
        if limit < 1:
            raise SandboxError(f"max_sandboxes must be >= 1, got {limit}")
        self.limit = limit
        self._slots = threading.BoundedSemaphore(limit)

    def acquire(self, timeout: float | None) -> None:
        if not self._slots.acquire(timeout=timeout):
            raise SandboxError(
                f"all {self.limit} sandbox slots are in use (max_sandboxes); release sandboxes or raise the cap"
            )

    def release(self) -> None:
        self._slots.release()


class WarmPool:
    def __init__(
        self, factory: Callable[[SandboxSpec], Sandbox], size_per_env: int = 4, max_sandboxes: int = 256
    ) -> None:
        self.factory = factory
        self.size_per_env = size_per_env
        self.cap = SandboxCap(max_sandboxes)
        self._ready: dict[str, deque[tuple[Sandbox, str]]] = defaultdict(deque)
        self._specs: dict[str, SandboxSpec] = {}
        self._lock = threading.Lock()
        self._wakeup = threading.Condition(self._lock)
        self._closed = False
        self._filler = threading.Thread(target=self._fill_forever, name="sandbox-pool-filler", daemon=True)
        self._filler.start()

    def warm(self, spec: SandboxSpec) -> None:
        """Start keeping `size_per_env` ready sandboxes of this environment."""
        with self._lock:
            self._specs.setdefault(spec_key(spec), spec)
            self._wakeup.notify()

    def acquire(self, spec: SandboxSpec, timeout: float | None = 60.0) -> Sandbox:
        key = spec_key(spec)
        with self._lock:
            self._specs.setdefault(key, spec)
            ready = self._ready[key]
            if ready:
                sandbox, clean = ready.popleft()
                sandbox._pool_clean = clean  # remembered for release
                self._wakeup.notify()
                return sandbox
            self._wakeup.notify()
        sandbox, clean = self._create(spec, timeout)
        sandbox._pool_clean = clean
        return sandbox

    def release(self, sandbox: Sandbox, spec: SandboxSpec) -> None:
        """Return a sandbox: reset to its clean snapshot and reuse it, or close it if the
        pool for that environment is full."""
        key = spec_key(spec)
        clean = getattr(sandbox, "_pool_clean", None)
        with self._lock:
            keep = not self._closed and clean is not None and len(self._ready[key]) < self.size_per_env
        if keep:
            try:
                sandbox.restore(clean)
            except SandboxError:
                keep = False
        if keep:
            with self._lock:
                self._ready[key].append((sandbox, clean))
            return
        self._destroy(sandbox)

    def ready_count(self, spec: SandboxSpec) -> int:
        with self._lock:
            return len(self._ready[spec_key(spec)])

    def close(self) -> None:
        with self._lock:
            self._closed = True
            self._wakeup.notify_all()
            everything = [s for ready in self._ready.values() for s, _ in ready]
            self._ready.clear()
        for sandbox in everything:
            self._destroy(sandbox)
        self._filler.join(timeout=5)

    def __enter__(self) -> WarmPool:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def _create(self, spec: SandboxSpec, timeout: float | None) -> tuple[Sandbox, str]:
        self.cap.acquire(timeout)
        try:
            sandbox = self.factory(spec)
        except BaseException:
            self.cap.release()
            raise
        return sandbox, sandbox.snapshot()

    def _destroy(self, sandbox: Sandbox) -> None:
        try:
            sandbox.close()
        finally:
            self.cap.release()

    def _fill_forever(self) -> None:
        while True:
            with self._lock:
                while not self._closed and not self._missing():
                    self._wakeup.wait(timeout=1.0)
                if self._closed:
                    return
                key = self._missing()
                spec = self._specs[key]
            try:
                made = self._create(spec, timeout=1.0)
            except SandboxError:
                continue  # at the cap: try again when something is released
            with self._lock:
                if self._closed:
                    closing = made
                else:
                    self._ready[key].append(made)
                    closing = None
            if closing:
                self._destroy(closing[0])

    def _missing(self) -> str | None:
        for key in self._specs:
            if len(self._ready[key]) < self.size_per_env:
                return key
        return None
