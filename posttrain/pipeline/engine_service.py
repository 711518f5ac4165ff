"""The rollout engine as a service: one thread steps the builtin engine continuously; rollout
workers anywhere (threads, processes, Ray actors) send it generation calls over a socket.

    server = EngineServer(engine)                 # in the driver, next to the trainer
    client = server.client()                      # picklable; an InferenceEngine
    client.generate(requests)                     # from any worker: blocks until done
    server.update_weights(named_params, version)  # from the trainer, between engine steps

Calls from all workers share the engine's continuous batching and prefix cache. A weight update
lands between two engine steps; what happens to generations in flight is the partial-rollout
rule (docs/async.md):

    continue  they go on under the new weights; every token records the policy version that
              sampled it (Completion.token_versions) and its logprob under that policy
    restart   they are aborted and started again from the prompt under the new weights

A worker that disconnects (its process died) has its generations aborted, freeing their KV
blocks. An engine step that raises fails the calls in flight with EngineError (their jobs are
retried by the scheduler) and the engine goes on serving.
"""

from __future__ import annotations

import itertools
import os
from contextlib import contextmanager
import secrets
import socket
import tempfile
import threading
import time
from concurrent.futures import Future
from dataclasses import dataclass, field, replace
from multiprocessing.connection import Client, Listener
from typing import Iterable, Literal

import torch

from posttrain.engine.interface import Completion, GenerationRequest
from posttrain.faults import fault_point

PartialRolloutRule = Literal["continue", "restart"]


class EngineError(RuntimeError):
    """The engine failed while serving a call (the call's job should be retried)."""


class CallAborted(RuntimeError):
    """The call was aborted (its caller asked, or it disconnected)."""


@dataclass
class _Call:
    call_id: int
    requests: list[GenerationRequest]
    future: Future = field(default_factory=Future)
    seqs: list = field(default_factory=list)
    restarts: int = 0


@dataclass
class EngineUsage:
    """Wall time the engine loop spent stepping vs waiting for work, since the last reset."""

    busy_s: float = 0.0
    idle_s: float = 0.0
    steps: int = 0

    @property
    def idle_fraction(self) -> float:
        total = self.busy_s + self.idle_s
        return self.idle_s / total if total else 0.0


class EngineServer:
    def __init__(self, engine, partial_rollouts: PartialRolloutRule = "continue",
                 host: str | None = None) -> None:
        if not hasattr(engine, "add_requests"):
            raise TypeError("the engine service needs a stepping engine (backend = \"builtin\")")
        self.engine = engine
        self.partial_rollouts = partial_rollouts
        self.usage = EngineUsage()
        self._calls: dict[int, _Call] = {}
        self._incoming: list[_Call] = []
        self._aborts: set[int] = set()
        self._ids = itertools.count()
        self._cond = threading.Condition()
        self._update_waiting = threading.Event()
        self._closed = threading.Event()
        self._dead: BaseException | None = None
        self._conns: dict = {}  # open worker connection -> the thread serving it
        self._authkey = secrets.token_bytes(16)
        if host is None:
            self._socket_dir = tempfile.mkdtemp(prefix="posttrain-engine-")
            self._listener = Listener(os.path.join(self._socket_dir, "engine.sock"), "AF_UNIX", authkey=self._authkey)
        else:
            self._socket_dir = None
            self._listener = Listener((host, 0), "AF_INET", authkey=self._authkey)
        self._loop_thread = threading.Thread(target=self._loop, name="engine-loop", daemon=True)
        self._accept_thread = threading.Thread(target=self._accept, name="engine-accept", daemon=True)
        self._loop_thread.start()
        self._accept_thread.start()

    # ---- the driver's side -------------------------------------------------------------------

    @property
    def version(self) -> int:
        return self.engine.version

    def client(self) -> "EngineClient":
        return EngineClient(self._listener.address, self._authkey)

    def submit(self, requests: list[GenerationRequest]) -> _Call:
        if self._dead is not None:
            raise EngineError(f"the engine loop died: {self._dead!r}")
        call = _Call(next(self._ids), list(requests))
        with self._cond:
            self._incoming.append(call)
            self._cond.notify_all()
        return call

    def generate(self, requests: list[GenerationRequest], attempts: int = 3) -> list[Completion]:
        """In-process use (held-out evaluation in the driver): the InferenceEngine interface.
        A failed engine step is retried (a call is deterministic given its seeds)."""
        for attempt in range(1, attempts + 1):
            try:
                return self.submit(requests).future.result()
            except EngineError:
                if attempt == attempts:
                    raise
        raise AssertionError("unreachable")

    def abort(self, call: _Call) -> None:
        with self._cond:
            self._aborts.add(call.call_id)
            self._cond.notify_all()

    def update_weights(self, named_tensors: Iterable[tuple[str, torch.Tensor]], version: int) -> None:
        """Copy the trainer's weights into the engine between two steps; apply the rule."""
        with self._engine_turn():
            self.engine.update_weights(named_tensors, version)
            if self.partial_rollouts == "restart":
                for call in self._calls.values():
                    if any(not s.is_finished for s in call.seqs):
                        self.engine.abort([_engine_id(call, r) for r in call.requests])
                        call.seqs = self.engine.add_requests(_engine_requests(call))
                        call.restarts += 1

    def set_version(self, version: int) -> None:
        """A step that changed nothing (every group filtered out) still advances the version."""
        with self._engine_turn():
            self.engine.version = version

    def reset_usage(self) -> EngineUsage:
        with self._cond:
            usage, self.usage = self.usage, EngineUsage()
        return usage

    def close(self) -> None:
        """Stop serving and join every thread of the service. None may outlive this call: each
        holds the server, and a daemon thread that drops the last reference to the engine while
        the interpreter shuts down frees tensors without the GIL it can no longer take, which
        aborts the process ("terminate called without an active exception")."""
        if self._closed.is_set():
            return
        self._closed.set()
        with self._cond:
            self._cond.notify_all()
        _wake_accept(self._listener.address)
        try:
            self._listener.close()
        except OSError:
            pass
        self._loop_thread.join(timeout=10)
        self._accept_thread.join(timeout=10)
        with self._cond:  # a connection is closed under this lock, so its fd is not reused here
            conns = list(self._conns.items())
            for conn, _ in conns:
                _shut_down(conn)
        for _, thread in conns:
            thread.join(timeout=10)
        if self._socket_dir:
            for name in os.listdir(self._socket_dir):
                os.unlink(os.path.join(self._socket_dir, name))
            os.rmdir(self._socket_dir)

    @contextmanager
    def _engine_turn(self):
        """The engine between two steps: the loop yields to a waiting update (an RLock alone
        is not fair, and the loop would take it straight back)."""
        self._update_waiting.set()
        try:
            with self.engine.lock:
                yield
        finally:
            self._update_waiting.clear()
            with self._cond:
                self._cond.notify_all()

    # ---- the engine loop ------------------------------------------------------------------------

    def _loop(self) -> None:
        try:
            self._serve_calls()
        except BaseException as exc:  # noqa: BLE001 - a dead loop must fail its callers, not hang them
            self._dead = exc
            with self._cond:
                waiting, self._incoming = self._incoming, []
            for call in waiting:
                call.future.set_exception(EngineError(f"the engine loop died: {exc!r}"))
            self._fail_all(exc)
            raise

    def _serve_calls(self) -> None:
        engine = self.engine
        while not self._closed.is_set():
            waited = time.perf_counter()
            with self._cond:
                while not self._closed.is_set() and not (self._incoming or self._aborts or self._calls):
                    self._cond.wait(0.5)
                while self._update_waiting.is_set() and not self._closed.is_set():
                    self._cond.wait(0.01)
                incoming, self._incoming = self._incoming, []
                aborts, self._aborts = self._aborts, set()
                self.usage.idle_s += time.perf_counter() - waited
            if self._closed.is_set():
                break
            started = time.perf_counter()
            with engine.lock:
                for call in incoming:
                    self._calls[call.call_id] = call
                    call.seqs = engine.add_requests(_engine_requests(call))
                for call_id in aborts:
                    call = self._calls.pop(call_id, None)
                    if call is not None:
                        engine.abort([_engine_id(call, r) for r in call.requests])
                        call.future.set_exception(CallAborted(f"call {call_id} aborted"))
                if self._calls and not engine.scheduler.has_work():
                    self._fail_all(RuntimeError("calls left without work in the engine"))
                elif engine.scheduler.has_work():
                    try:
                        fault_point("engine_step")
                        engine.step()
                        self.usage.steps += 1
                        if self._calls:
                            fault_point(f"generation-v{engine.version}")
                    except Exception as exc:  # noqa: BLE001 - fail the calls, keep serving
                        self._fail_all(exc)
                done = [c for c in self._calls.values() if c.seqs and all(s.is_finished for s in c.seqs)]
                for call in done:
                    del self._calls[call.call_id]
                    completions = [_restore_id(engine.completion(s), call) for s in call.seqs]
                    call.future.set_result(completions)
            with self._cond:
                self.usage.busy_s += time.perf_counter() - started
        self._fail_all(CallAborted("engine service closed"))

    def _fail_all(self, exc: BaseException) -> None:
        calls, self._calls = list(self._calls.values()), {}
        error = exc if isinstance(exc, CallAborted) else EngineError(f"engine step failed: {exc!r}")
        for call in calls:
            try:
                self.engine.abort([_engine_id(call, r) for r in call.requests])
            except Exception:  # noqa: BLE001 - the engine is already in trouble
                pass
            if not call.future.done():
                call.future.set_exception(error)

    # ---- workers' connections -------------------------------------------------------------------

    def _accept(self) -> None:
        while not self._closed.is_set():
            try:
                conn = self._listener.accept()
            except (OSError, EOFError):
                if self._closed.is_set():
                    return
                continue  # a client that failed authentication, or went away mid-handshake
            thread = threading.Thread(target=self._serve, args=(conn,), name="engine-conn", daemon=True)
            with self._cond:
                if self._closed.is_set():
                    conn.close()
                    return
                self._conns[conn] = thread
            thread.start()

    def _serve(self, conn) -> None:
        call = None
        try:
            while not self._closed.is_set():
                message = conn.recv()
                if message[0] != "generate":
                    continue  # an abort that arrived after its call had finished
                call = self.submit(message[1])
                while not call.future.done():
                    try:
                        call.future.result(timeout=0.05)
                    except Exception:  # noqa: BLE001 - the outcome is read below
                        pass
                    if not call.future.done() and conn.poll() and conn.recv()[0] == "abort":
                        self.abort(call)
                try:
                    conn.send(("ok", call.future.result(), self.version))
                except CallAborted as exc:
                    conn.send(("aborted", str(exc), self.version))
                except EngineError as exc:
                    conn.send(("error", str(exc), self.version))
        except (EOFError, OSError):
            if call is not None and not call.future.done():
                self.abort(call)  # the worker went away: free its KV blocks
        finally:
            with self._cond:
                self._conns.pop(conn, None)
                conn.close()


def _wake_accept(address) -> None:
    """Connect to the listener once so that a thread blocked in accept() returns (closing the
    listening socket does not wake it on Linux); the handshake then fails and it sees the close."""
    family = socket.AF_UNIX if isinstance(address, str) else socket.AF_INET
    try:
        with socket.socket(family, socket.SOCK_STREAM) as probe:
            probe.settimeout(1.0)
            probe.connect(address)
    except OSError:
        pass  # nothing listens any more: no thread is blocked in accept()


def _shut_down(conn) -> None:
    """Wake a thread blocked reading `conn` (recv returns end-of-file)."""
    try:
        with socket.socket(fileno=os.dup(conn.fileno())) as sock:
            sock.shutdown(socket.SHUT_RDWR)
    except OSError:
        pass  # already closed by its own thread


def _engine_id(call: _Call, request: GenerationRequest) -> str:
    return f"{call.call_id}|{request.request_id}"


def _engine_requests(call: _Call) -> list[GenerationRequest]:
    return [replace(r, request_id=_engine_id(call, r)) for r in call.requests]


def _restore_id(completion: Completion, call: _Call) -> Completion:
    completion.request_id = completion.request_id.split("|", 1)[1]
    return completion


class EngineClient:
    """A worker's handle on the engine service: `generate()` as any InferenceEngine. Picklable
    (the connection is opened lazily, one per thread). `cancelled`, when given, is polled while
    a call waits: if it turns true the call is aborted and `on_cancel()` is raised."""

    def __init__(self, address, authkey: bytes, cancelled=None, on_cancel=None) -> None:
        self.address = address
        self.authkey = authkey
        self.cancelled = cancelled
        self.on_cancel = on_cancel
        self.version = 0
        self._local = threading.local()

    def with_cancel(self, cancelled, on_cancel) -> "EngineClient":
        client = EngineClient(self.address, self.authkey, cancelled, on_cancel)
        client._local = self._local  # share this thread's connection
        return client

    def __getstate__(self) -> dict:
        return {"address": self.address, "authkey": self.authkey}

    def __setstate__(self, state: dict) -> None:
        self.__init__(state["address"], state["authkey"])

    def _conn(self):
        conn = getattr(self._local, "conn", None)
        if conn is None:
            conn = self._local.conn = Client(self.address, authkey=self.authkey)
        return conn

    def generate(self, requests: list[GenerationRequest]) -> list[Completion]:
        conn = self._conn()
        try:
            conn.send(("generate", list(requests)))
            cancelling = False
            while not conn.poll(0.05):
                if not cancelling and self.cancelled is not None and self.cancelled():
                    conn.send(("abort",))
                    cancelling = True
            status, value, version = conn.recv()
        except (EOFError, OSError) as exc:
            self._local.conn = None
            raise EngineError(f"lost the connection to the engine service: {exc!r}") from None
        self.version = version
        if status == "ok":
            return value
        if status == "aborted" and cancelling and self.on_cancel is not None:
            raise self.on_cancel()
        if status == "aborted":
            raise CallAborted(value)
        raise EngineError(value)

    def update_weights(self, named_tensors, version: int) -> None:
        raise EngineError("rollout workers do not update weights; the trainer updates the engine service")
