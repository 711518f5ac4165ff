"""Named fault points, for tests that kill or break a real run at a chosen moment.

`POSTTRAIN_FAULTS` lists `ACTION:POINT@N` entries, comma-separated; the N-th time (1-based)
the process passes POINT, ACTION happens:

    die    SIGKILL this process (no cleanup, no flush: as `kill -9` would)
    raise  raise FaultInjected (an error the code around the point has to survive)

Points: `generation-vK` (an engine step with calls in flight while the engine holds policy
version K), `train_step` (after the optimizer step, before anything of the step is written),
`checkpoint_write` (the checkpoint's files are in its temp directory, not yet renamed),
`sft_step` (an SFT optimizer step done, not yet recorded),
`rollout_job` (a rollout worker mid-episode: the engine has answered, the result is not yet
returned), `engine_step` (inside the engine loop).
With `POSTTRAIN_FAULTS_ONCE=DIR`, each entry fires once across every process that shares DIR
(a marker file is created first), so a replacement worker does not die again.

On demand, at a moment chosen from outside (benchmarks/chaos.py): with
`POSTTRAIN_FAULTS_TRIGGER=DIR`, a file `DIR/ACTION-POINT` (`raise-engine_step`) makes the next
pass of POINT in any process that shares DIR do ACTION; the process that acts removes the file
first, so one file is one fault. Both unset, every call is two dictionary lookups.
"""

from __future__ import annotations

import os
import signal
import threading

ENV = "POSTTRAIN_FAULTS"
ONCE_ENV = "POSTTRAIN_FAULTS_ONCE"
TRIGGER_ENV = "POSTTRAIN_FAULTS_TRIGGER"
ACTIONS = ("die", "raise")


class FaultInjected(RuntimeError):
    """Raised at a fault point by a `raise:` entry."""


_counts: dict[str, int] = {}
_lock = threading.Lock()
_parsed: tuple[str, dict[str, list[tuple[str, int]]]] | None = None


def _plan() -> dict[str, list[tuple[str, int]]]:
    global _parsed
    spec = os.environ.get(ENV, "")
    if _parsed is None or _parsed[0] != spec:
        plan: dict[str, list[tuple[str, int]]] = {}
        for entry in filter(None, (e.strip() for e in spec.split(","))):
            try:
                action, rest = entry.split(":", 1)
                point, nth = rest.split("@", 1)
                if action not in ACTIONS:
                    raise ValueError(action)
                plan.setdefault(point, []).append((action, int(nth)))
            except ValueError:
                raise ValueError(
                    f"{ENV}: bad entry {entry!r}; expected ACTION:POINT@N with ACTION die or raise"
                ) from None
        _parsed = (spec, plan)
    return _parsed[1]


def fault_point(point: str) -> None:
    """Pass the named point: counts it, and dies or raises if the plan (or a trigger file) says
    so now."""
    if TRIGGER_ENV in os.environ:
        _triggered(point, os.environ[TRIGGER_ENV])
    if ENV not in os.environ:
        return
    plan = _plan().get(point)
    if not plan:
        return
    with _lock:
        _counts[point] = count = _counts.get(point, 0) + 1
    for action, nth in plan:
        if count == nth and _first_time(f"{action}-{point}-{nth}"):
            _act(action, f"fault injected at {point} (pass {count})")


def _triggered(point: str, directory: str) -> None:
    for action in ACTIONS:
        try:
            os.unlink(os.path.join(directory, f"{action}-{point}"))
        except FileNotFoundError:
            continue
        _act(action, f"fault triggered at {point}")


def _act(action: str, message: str) -> None:
    if action == "die":
        os.kill(os.getpid(), signal.SIGKILL)
    raise FaultInjected(message)


def _first_time(name: str) -> bool:
    directory = os.environ.get(ONCE_ENV)
    if not directory:
        return True
    os.makedirs(directory, exist_ok=True)
    try:
        os.close(os.open(os.path.join(directory, name), os.O_CREAT | os.O_EXCL | os.O_WRONLY))
    except FileExistsError:
        return False
    return True
