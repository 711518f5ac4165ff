"""Reward functions the user writes: `verifier = "python:my_module:my_function"`.

    def my_function(task: dict, completion: str) -> float | dict:
        # task: {"id", "domain", "instruction", "answer", "metadata"}
        return 1.0 if completion.strip() == str(task["answer"]) else 0.0
        # or {"reward": 0.5, "format_ok": 1.0}: extra numbers become metrics

like TRL's `reward_funcs` and verl's `custom_reward_function`. The module is imported from the
Python path, with the run config's folder in front, so `my_module.py` beside the config works.

A user function may raise, hang or return nonsense, and one bad sample must not end a run. So
the functions run in a worker process (`RewardWorker`, started on first use and kept): a call
that raises comes back as its message; one that outlives its timeout has its worker killed (a
fresh one starts with the next call); a result that is not a number in [0, 1] (or a dict
holding one as `reward`) is refused here. Each of these is a `RewardFunctionError` whose
message the verifier records on the sample (posttrain.tasks.verifiers).
"""

from __future__ import annotations

import importlib
import math
import os
import pickle
import select
import struct
import subprocess
import sys
import threading
import time
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from posttrain.errors import TaskSourceError

PREFIX = "python:"
DEFAULT_REWARD_TIMEOUT_S = 10.0  # seconds a call may take, unless the domain sets reward_timeout_s


class RewardFunctionError(Exception):
    """One call of a user's reward function failed; the message says how."""


@dataclass(frozen=True)
class RewardFunction:
    module: str
    function: str
    search_path: str | None = None  # a folder to import the module from (the config's)

    @property
    def spec(self) -> str:
        return f"{PREFIX}{self.module}:{self.function}"


def parse_reward_function(spec: str, search_path: Path | None = None) -> RewardFunction:
    """'python:module:function' -> RewardFunction; ValueError naming the problem."""
    module, _, function = spec.removeprefix(PREFIX).partition(":")
    if not spec.startswith(PREFIX) or not module or not function or ":" in function:
        raise ValueError(f"{spec!r}: expected python:<module>:<function>")
    return RewardFunction(module, function, str(search_path) if search_path else None)


def check_importable(reward: RewardFunction) -> None:
    """Import the function here, once, so a typo fails at start-up (TaskSourceError), not on
    every sample."""
    try:
        with _on_path(reward.search_path):
            function = getattr(importlib.import_module(reward.module), reward.function, None)
    except Exception as exc:  # the user's module failed to import: say why
        raise TaskSourceError(f"verifier {reward.spec!r}: cannot import {reward.module}: {exc}") from exc
    if not callable(function):
        raise TaskSourceError(f"verifier {reward.spec!r}: module {reward.module} has no function {reward.function!r}")


def checked_result(result) -> tuple[float, dict[str, float]]:
    """(reward, extra metrics) from what a function returned; RewardFunctionError otherwise."""
    extras: dict[str, float] = {}
    if isinstance(result, dict):
        if "reward" not in result:
            raise RewardFunctionError(f"returned a dict without 'reward' (keys: {sorted(result)[:5]})")
        extras = {str(k): v for k, v in result.items() if k != "reward"}
        bad = [k for k, v in extras.items() if not _is_number(v)]
        if bad:
            raise RewardFunctionError(f"returned non-numeric extra metric(s) {bad}")
        extras = {k: float(v) for k, v in extras.items()}
        result = result["reward"]
    if not _is_number(result):
        raise RewardFunctionError(f"returned {type(result).__name__} {result!r:.60}; expected a number in [0, 1]")
    value = float(result)
    if not 0.0 <= value <= 1.0:
        raise RewardFunctionError(f"returned {value!r}, outside [0, 1]")
    return value, extras


def _is_number(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


@contextmanager
def _on_path(folder: str | None):
    if folder is None or folder in sys.path:
        yield
        return
    sys.path.insert(0, folder)
    try:
        yield
    finally:
        sys.path.remove(folder)


def _serve(requests, replies) -> None:
    """The worker's loop: pickled (module, function, search path, task, completion) in;
    ("loaded", None) once the function is imported, then ("ok", result) or ("error", message)
    out (an import that raised sends its error alone)."""
    functions = {}
    while True:
        try:
            module, name, folder, task, completion = pickle.load(requests)
        except EOFError:
            return
        try:
            key = (module, name, folder)
            if key not in functions:
                with _on_path(folder):
                    functions[key] = getattr(importlib.import_module(module), name)
            _send(replies, pickle.dumps(("loaded", None)))
            reply = ("ok", functions[key](task, completion))
        except BaseException as exc:  # anything the user's code raises is the sample's error
            reply = ("error", f"raised {type(exc).__name__}: {exc}")
        try:
            payload = pickle.dumps(reply)
        except Exception as exc:  # an unpicklable result
            payload = pickle.dumps(("error", f"returned something that cannot be sent back ({exc})"))
        _send(replies, payload)


def _send(replies, payload: bytes) -> None:
    """One reply as a frame: its length (8 bytes), then the pickle."""
    replies.write(struct.pack("<Q", len(payload)) + payload)
    replies.flush()


def _import_roots() -> list[str]:
    """The worker imports this very posttrain (the folder above the package) first."""
    package_root = str(Path(__file__).resolve().parents[2])
    inherited = [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]
    return [package_root, *inherited]


LOAD_TIMEOUT_S = 120.0  # a worker's start and a reward module's import


class RewardWorker:
    """One process (`python -m posttrain.tasks.custom_rewards`) that runs reward functions,
    replaced when a call hangs or kills it. A plain subprocess, not multiprocessing: nothing of
    the parent (its torch threads, its __main__) is forked or re-imported."""

    def __init__(self, memory_mb: int | None = None) -> None:
        self._lock = threading.Lock()
        self._process: subprocess.Popen | None = None
        self.memory_mb = memory_mb  # a cap on the worker's address space (None: none)

    def call(self, reward: RewardFunction, task: dict, completion: str, timeout_s: float):
        """The function's raw result; RewardFunctionError when it raised, hung or died."""
        with self._lock:
            if self._process is None or self._process.poll() is not None:
                self._start()
            process = self._process
            try:
                request = (reward.module, reward.function, reward.search_path, task, completion)
                process.stdin.write(pickle.dumps(request))
                process.stdin.flush()
                # The worker's start and the function's import have their own allowance: a
                # fresh worker on a loaded machine is slow to start, which says nothing of the
                # function.
                status, value = self._receive(max(timeout_s, LOAD_TIMEOUT_S), "while starting or importing")
                if status == "loaded":
                    status, value = self._receive(timeout_s, "")
            except (EOFError, OSError, pickle.UnpicklingError):
                self._stop()
                raise RewardFunctionError("its worker process died") from None
        if status == "error":
            raise RewardFunctionError(value)
        return value

    def _receive(self, timeout_s: float, during: str):
        """The next reply frame, read from the pipe's descriptor itself (a buffered reader could
        hold a second frame where select cannot see it)."""
        deadline = time.monotonic() + timeout_s
        fd = self._process.stdout.fileno()
        header = self._read_exactly(fd, 8, deadline, timeout_s, during)
        return pickle.loads(self._read_exactly(fd, struct.unpack("<Q", header)[0], deadline, timeout_s, during))

    def _read_exactly(self, fd: int, size: int, deadline: float, timeout_s: float, during: str) -> bytes:
        data = b""
        while len(data) < size:
            ready, _, _ = select.select([fd], [], [], max(0.0, deadline - time.monotonic()))
            if not ready:
                self._stop()
                raise RewardFunctionError(f"timed out after {timeout_s:g} s" + (f" {during}" if during else ""))
            chunk = os.read(fd, size - len(data))
            if not chunk:
                raise EOFError
            data += chunk
        return data

    def _start(self) -> None:
        self._process = subprocess.Popen(
            [sys.executable, "-m", "posttrain.tasks.custom_rewards"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            env={**os.environ, "OMP_NUM_THREADS": "1", "PYTHONPATH": os.pathsep.join(_import_roots())},
            preexec_fn=_address_space_cap(self.memory_mb) if self.memory_mb else None,
        )

    def _stop(self) -> None:
        if self._process is not None:
            self._process.kill()
            self._process.wait()
            for pipe in (self._process.stdin, self._process.stdout):
                pipe.close()
        self._process = None

    def close(self) -> None:
        with self._lock:
            self._stop()


def _address_space_cap(memory_mb: int):
    def cap() -> None:
        import resource

        limit = memory_mb * 1024 * 1024
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))

    return cap


WORKER = RewardWorker()


def call_reward_function(reward: RewardFunction, task: dict, completion: str, timeout_s: float):
    """(reward in [0, 1], extra metrics), or RewardFunctionError with the reason."""
    return checked_result(WORKER.call(reward, task, completion, timeout_s))


if __name__ == "__main__":
    # the replies go to the real stdout; the user's prints go to stderr instead of into them
    replies = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    _serve(sys.stdin.buffer, replies)
