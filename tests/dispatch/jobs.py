"""Module-level job functions for the dispatcher tests (process and Ray workers import them)."""

import os
import time
from pathlib import Path

from posttrain.dispatch import Preempted


def echo(payload, ctx):
    return {"payload": payload, "attempt": ctx.attempt, "worker": ctx.worker, "pid": os.getpid()}


def fail_first(payload, ctx):
    """Raises on the first `payload["failures"]` attempts, then succeeds."""
    if ctx.attempt <= payload["failures"]:
        raise RuntimeError(f"planned failure {ctx.attempt}")
    return ctx.attempt


def hold(payload, ctx):
    """Writes its pid to payload["marker"] and waits until cancelled (-> Preempted), until
    payload["release"] exists, or for payload["seconds"]."""
    marker = payload.get("marker")
    if marker:  # written whole: a test reads it as soon as it exists
        partial = Path(f"{marker}.partial")
        partial.write_text(str(os.getpid()))
        partial.replace(marker)
    deadline = time.monotonic() + payload.get("seconds", 60.0)
    release = payload.get("release")
    while time.monotonic() < deadline:
        if ctx.cancelled():
            raise Preempted()
        if release and Path(release).exists():
            break
        time.sleep(0.005)
    return {"id": ctx.job_id, "pid": os.getpid(), "end": time.time(), "attempt": ctx.attempt}
