"""Generation calls over a socket: rollout workers anywhere (threads, processes, Ray actors)
hold an EngineClient; the driver's EngineListener passes their calls to its RolloutEngine.

A Unix socket by default, TCP when a host is given (the Ray cluster is elsewhere). A worker
that disconnects (its process died) has its call aborted, freeing its KV blocks; a cancelled
worker aborts its call.
"""

from __future__ import annotations

import os
import secrets
import socket
import tempfile
import threading
from multiprocessing.connection import Client, Listener

from posttrain.engine.interface import Completion, GenerationRequest
from posttrain.engine.service.rollout_engine import CallAborted, EngineError, RolloutEngine


class EngineListener:
    """Serves `engine` to EngineClients until it closes; `close()` then joins its threads."""

    def __init__(self, engine: RolloutEngine, host: str | None = None) -> None:
        self._engine = engine
        self._lock = threading.Lock()
        self._conns: dict = {}  # open worker connection -> the thread serving it
        self._closed = False
        self._authkey = secrets.token_bytes(16)
        if host is None:
            self._socket_dir = tempfile.mkdtemp(prefix="posttrain-engine-")
            self._listener = Listener(os.path.join(self._socket_dir, "engine.sock"), "AF_UNIX", authkey=self._authkey)
        else:
            self._socket_dir = None
            self._listener = Listener((host, 0), "AF_INET", authkey=self._authkey)
        self._accept_thread = threading.Thread(target=self._accept, name="engine-accept", daemon=True)
        self._accept_thread.start()

    def client(self) -> EngineClient:
        return EngineClient(self._listener.address, self._authkey)

    def close(self) -> None:
        """Join every thread of the listener (after the engine closed, so none waits for a call).
        None may outlive this call: each holds the engine, and a daemon thread that drops the
        last reference to the engine while the interpreter shuts down frees tensors without
        the GIL it can no longer take, which aborts the process ("terminate called without an
        active exception")."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
        _wake_accept(self._listener.address)
        try:
            self._listener.close()
        except OSError:
            pass
        self._accept_thread.join(timeout=10)
        with self._lock:  # a connection is closed under this lock, so its fd is not reused here
            conns = list(self._conns.items())
            for conn, _ in conns:
                _shut_down(conn)
        for _, thread in conns:
            thread.join(timeout=10)
        if self._socket_dir:
            for name in os.listdir(self._socket_dir):
                os.unlink(os.path.join(self._socket_dir, name))
            os.rmdir(self._socket_dir)

    def _stopping(self) -> bool:
        return self._closed or self._engine.loop.closed

    def _accept(self) -> None:
        while not self._stopping():
            try:
                conn = self._listener.accept()
            except (OSError, EOFError):
                if self._stopping():
                    return
                continue  # a client that failed authentication, or went away mid-handshake
            thread = threading.Thread(target=self._serve, args=(conn,), name="engine-conn", daemon=True)
            with self._lock:
                if self._stopping():
                    conn.close()
                    return
                self._conns[conn] = thread
            thread.start()

    def _serve(self, conn) -> None:
        engine = self._engine
        call = None
        try:
            while not self._stopping():
                message = conn.recv()
                if message[0] != "generate":
                    continue  # an abort that arrived after its call had finished
                call = engine.submit(message[1])
                while not call.future.done():
                    try:
                        call.future.result(timeout=0.05)
                    except Exception:  # noqa: BLE001 - the outcome is read below
                        pass
                    if not call.future.done() and conn.poll() and conn.recv()[0] == "abort":
                        engine.abort(call)
                try:
                    conn.send(("ok", call.future.result(), engine.version))
                except CallAborted as exc:
                    conn.send(("aborted", str(exc), engine.version))
                except EngineError as exc:
                    conn.send(("error", str(exc), engine.version))
        except (EOFError, OSError):
            if call is not None and not call.future.done():
                engine.abort(call)  # the worker went away: free its KV blocks
        finally:
            with self._lock:
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

    def for_job(self, number: int) -> EngineClient:
        """The client job `number` uses: one service, so this one (replicas route here)."""
        return self

    def with_cancel(self, cancelled, on_cancel) -> EngineClient:
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
