"""`python -m posttrain.cli ...` processes forked from a preloaded interpreter.

Many tests start real `posttrain` processes (train, resume, eval, kill -9, SIGTERM). On a slow
CPU most of such a process's life is importing torch and transformers (12 s of a 25-s tiny
training run on an AVX2-only EPYC). Here a test's `subprocess.Popen` / `subprocess.run` of that
command is served by a zygote: an interpreter started once per test process that has imported
the heavy third-party modules (never posttrain's own, whose import reads the environment) and
forks a child per command. The child is a real process running the real CLI: it has its own
pid, which the test signals and kills directly; its stdin/stdout/stderr are the file
descriptors subprocess made (passed over a Unix socket); it gets the command's cwd and
environment, and runs `posttrain.cli` as `-m` would, exiting as a fresh interpreter would
(threads joined, atexit handlers run, a traceback and status 1 on an uncaught exception).
Only the start-up is shared.

A command with options a forked child cannot honour (shell, executable, pass_fds, a
preexec_fn other than conftest's sigint_as_in_a_terminal, another user) runs as a normal
subprocess. One whose environment differs in a variable read at import time (HF_*,
TRANSFORMERS_*, OMP_*, PYTHON*, ...) from the zygotes so far gets a zygote of its own: at most
MAX_ZYGOTES run, the least recently used idle one making room, and a command finding none idle
runs as a normal subprocess. POSTTRAIN_TEST_FORK_CLI=0 turns the whole thing off; in a
command's own environment, it starts that command afresh.
"""

from __future__ import annotations

import array
import json
import os
import signal
import socket
import struct
import subprocess
import sys
import threading
from collections import OrderedDict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
_RealPopen = subprocess.Popen
MAX_ZYGOTES = 3
# environment variables some module reads when it is imported (and so fixed in a zygote)
IMPORT_TIME_PREFIXES = (
    "HF_",
    "HUGGINGFACE",
    "TRANSFORMERS",
    "TORCH",
    "PYTORCH",
    "OMP_",
    "MKL",
    "KMP_",
    "OPENBLAS",
    "TOKENIZERS",
    "PYTHON",
    "LD_",
    "MALLOC",
    "DNNL",
    "ONEDNN",
    "XDG_CACHE",
)
# third-party modules only, heaviest first (posttrain's own modules read the environment)
PRELOAD = (
    "torch",
    "transformers",
    "transformers.modeling_utils",
    "transformers.models.llama.modeling_llama",
    "transformers.generation",
    "tokenizers",
    "safetensors.torch",
    "numpy",
    "typer",
    "rich.console",
    "rich.progress",
    "fsspec",
    "yaml",
)


def enabled() -> bool:
    return os.environ.get("POSTTRAIN_TEST_FORK_CLI", "1") != "0" and sys.platform == "linux"


def is_cli_command(args) -> bool:
    return (
        isinstance(args, (list, tuple))
        and len(args) >= 3
        and str(args[0]) == sys.executable
        and list(map(str, args[1:3])) == ["-m", "posttrain.cli"]
    )


def import_time_environment(env) -> tuple:
    """The variables a zygote's preloaded modules may have read (PYTHONPATH is not one: a
    child's sys.path is set from its own)."""
    return tuple(sorted((k, v) for k, v in env.items() if k.startswith(IMPORT_TIME_PREFIXES) and k != "PYTHONPATH"))


def _pythonpath(env) -> list[str]:
    return [entry for entry in env.get("PYTHONPATH", "").split(os.pathsep) if entry]


# ---- the zygote (runs in its own interpreter: this file is its main program) ----


def _recv_message(conn: socket.socket, max_fds: int = 0) -> tuple[dict | None, list[int]]:
    header, fds = b"", []
    while len(header) < 4:
        data, ancdata, _, _ = conn.recvmsg(
            4 - len(header), socket.CMSG_SPACE(max_fds * array.array("i").itemsize) if max_fds else 0
        )
        if not data:
            return None, fds
        header += data
        for level, kind, payload in ancdata:
            if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS:
                got = array.array("i")
                got.frombytes(payload[: len(payload) - (len(payload) % got.itemsize)])
                fds.extend(got)
    (length,) = struct.unpack("!I", header)
    body = b""
    while len(body) < length:
        chunk = conn.recv(length - len(body))
        if not chunk:
            return None, fds
        body += chunk
    return json.loads(body), fds


def _send_message(conn: socket.socket, message: dict, fds: list[int] = ()) -> None:
    body = json.dumps(message).encode()
    data = struct.pack("!I", len(body)) + body
    if fds:
        conn.sendmsg([data], [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array("i", fds))])
    else:
        conn.sendall(data)


def _run_child(
    request: dict, fds: list[int], control: socket.socket, wakeup: tuple[int, int], zygote_path: list[str]
) -> None:
    """In the forked child: become the command's process, run the CLI, exit as python would."""
    code = 1
    try:
        control.close()
        signal.set_wakeup_fd(-1)
        for fd in wakeup:
            os.close(fd)
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
        signal.signal(signal.SIGINT, signal.SIG_IGN if request["sigint_ignored"] else signal.default_int_handler)
        signal.pthread_sigmask(signal.SIG_SETMASK, set())
        if request["new_session"]:
            os.setsid()
        for target, fd in enumerate(fds):
            os.dup2(fd, target)
        for fd in fds:
            if fd > 2:
                os.close(fd)
        os.chdir(request["cwd"])
        # as `python -m` builds it: the cwd, then $PYTHONPATH, then the interpreter's own
        rest = [entry for entry in sys.path[1:] if entry not in zygote_path]
        sys.path[:] = [os.getcwd(), *map(os.path.abspath, _pythonpath(request["env"])), *rest]
        os.environ.clear()
        os.environ.update(request["env"])
        sys.argv = ["posttrain.cli", *request["args"]]
        import runpy

        try:
            runpy.run_module("posttrain.cli", run_name="__main__", alter_sys=True)
            code = 0
        except SystemExit as stop:
            if stop.code is None:
                code = 0
            elif isinstance(stop.code, int):
                code = stop.code
            else:
                print(stop.code, file=sys.stderr)
                code = 1
        except KeyboardInterrupt:
            sys.excepthook(*sys.exc_info())
            code = -signal.SIGINT
        except BaseException:
            sys.excepthook(*sys.exc_info())
            code = 1
        threading._shutdown()  # as at interpreter exit: wait for non-daemon threads
        import atexit

        atexit._run_exitfuncs()
    except BaseException:
        try:
            sys.excepthook(*sys.exc_info())
        except BaseException:
            pass
    finally:
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except BaseException:
                pass
        if code == -signal.SIGINT:  # an uncaught KeyboardInterrupt ends python by SIGINT
            signal.signal(signal.SIGINT, signal.SIG_DFL)
            os.kill(os.getpid(), signal.SIGINT)
        os._exit(code & 0xFF)


def _zygote_main(control_fd: int) -> None:
    import importlib
    import selectors

    for name in PRELOAD:
        try:
            importlib.import_module(name)
        except ImportError:
            pass

    zygote_path = list(map(os.path.abspath, _pythonpath(os.environ)))
    control = socket.socket(fileno=control_fd)
    read_wakeup, write_wakeup = os.pipe()
    os.set_blocking(write_wakeup, False)
    signal.set_wakeup_fd(write_wakeup)
    signal.signal(signal.SIGCHLD, lambda *_: None)
    selector = selectors.DefaultSelector()
    selector.register(control, selectors.EVENT_READ, "control")
    selector.register(read_wakeup, selectors.EVENT_READ, "wakeup")
    _send_message(control, {"ready": os.getpid()})
    while True:
        for key, _ in selector.select(timeout=1.0):
            if key.data == "wakeup":
                os.read(read_wakeup, 4096)
        while True:  # reap every finished child and report it
            try:
                pid, status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                break
            if pid == 0:
                break
            _send_message(control, {"exited": pid, "status": status})
        control.setblocking(False)
        try:
            peek = control.recv(1, socket.MSG_PEEK)
        except BlockingIOError:
            peek = None
        finally:
            control.setblocking(True)
        if peek == b"":
            os._exit(0)  # the test process is gone
        if peek is None:
            continue
        request, fds = _recv_message(control, max_fds=3)
        if request is None:
            os._exit(0)
        if threading.active_count() != 1:
            _send_message(control, {"refused": "the zygote has threads; forking it is unsafe"})
        else:
            pid = os.fork()
            if pid == 0:
                selector.close()
                _run_child(request, fds, control, (read_wakeup, write_wakeup), zygote_path)
            _send_message(control, {"started": pid})
        for fd in fds:
            os.close(fd)


# ---- the test process's side ----


class _Zygote:
    def __init__(self, env: dict) -> None:
        from tests.conftest import sigint_as_in_a_terminal  # (conftest imports this module)

        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        self.process = _RealPopen(
            [sys.executable, str(Path(__file__).resolve()), str(theirs.fileno())],
            env=env,
            cwd=ROOT,
            pass_fds=[theirs.fileno()],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            preexec_fn=sigint_as_in_a_terminal,
        )
        theirs.close()
        self.control = ours
        self.lock = threading.Lock()
        self.exits: dict[int, int] = {}
        self.running: set[int] = set()
        self.replies: list[dict] = []
        self.buffer = bytearray()
        with self.lock:
            while not self.replies:
                self._pump(None)
        if "ready" not in self.replies.pop(0):
            raise RuntimeError("the CLI zygote did not start")

    def _pump(self, timeout: float | None) -> None:
        """Read what the zygote sent (waiting up to `timeout`; None: until something comes)."""
        self.control.settimeout(timeout)
        try:
            data = self.control.recv(65536)
        except (TimeoutError, BlockingIOError):
            return
        finally:
            self.control.settimeout(None)
        if not data:
            raise RuntimeError("the CLI zygote died")
        self.buffer += data
        while len(self.buffer) >= 4:
            (length,) = struct.unpack("!I", self.buffer[:4])
            if len(self.buffer) < 4 + length:
                break
            message = json.loads(bytes(self.buffer[4 : 4 + length]))
            del self.buffer[: 4 + length]
            if "exited" in message:
                self.exits[message["exited"]] = message["status"]
                self.running.discard(message["exited"])
            else:
                # an exit of this pid read before its start is an earlier child's, never waited for
                self.exits.pop(message.get("started"), None)
                self.replies.append(message)

    def close(self) -> None:
        """Stop the zygote (its children, if any, run on)."""
        self.control.close()
        self.process.wait(timeout=30)

    def start(self, request: dict, fds: list[int]) -> int | None:
        with self.lock:
            _send_message(self.control, request, fds)
            while not self.replies:
                self._pump(None)
            pid = self.replies.pop(0).get("started")
            if pid is not None:
                self.running.add(pid)
            return pid

    def idle(self) -> bool:
        """No child of it is running (one still running would lose its exit status with it)."""
        with self.lock:
            self._pump(0.0)
            return not self.running

    def status(self, pid: int, block: bool) -> int | None:
        """The wait status of a child, or None while it runs (block: until it ends)."""
        while True:
            with self.lock:
                if pid not in self.exits:
                    self._pump(0.05 if block else 0.0)
                if pid in self.exits:
                    return self.exits.pop(pid)
            if not block:
                return None


_zygotes: OrderedDict[tuple, _Zygote] = OrderedDict()  # least recently used first
_zygotes_lock = threading.Lock()


def _zygote_for(env: dict) -> _Zygote | None:
    """The zygote for this environment, started if need be; when MAX_ZYGOTES run, the least
    recently used idle one is stopped to make room (None if every one has a child running)."""
    key = import_time_environment(env)
    with _zygotes_lock:
        if key not in _zygotes:
            if len(_zygotes) >= MAX_ZYGOTES:
                idle = next((k for k, zygote in _zygotes.items() if zygote.idle()), None)
                if idle is None:
                    return None
                _zygotes.pop(idle).close()
            _zygotes[key] = _Zygote(env)
        _zygotes.move_to_end(key)
        return _zygotes[key]


def close_zygote(env: dict) -> None:
    """Stop the zygote that serves commands with this environment, if one was started."""
    with _zygotes_lock:
        zygote = _zygotes.pop(import_time_environment(env), None)
    if zygote is not None:
        zygote.close()


class ForkingPopen(_RealPopen):
    """subprocess.Popen that serves `python -m posttrain.cli` commands from a zygote."""

    _zygote: _Zygote | None = None

    def _forkable(self, args, executable, preexec_fn, pass_fds, shell, extra, env) -> bool:
        if not (enabled() and is_cli_command(args)) or shell or executable or pass_fds:
            return False
        if env is not None and env.get("POSTTRAIN_TEST_FORK_CLI") == "0":  # a test's own opt-out
            return False
        if preexec_fn is not None and getattr(preexec_fn, "__name__", "") != "sigint_as_in_a_terminal":
            return False
        return all(value is None or value == -1 for value in extra)

    def _execute_child(self, *call) -> None:
        """Popen's own step that starts the child (POSIX arguments, in its order)."""
        (args, executable, preexec_fn, _, pass_fds, cwd, env, _, _, shell) = call[:10]
        p2cread, p2cwrite, c2pread, c2pwrite, errread, errwrite = call[10:16]
        gid, gids, uid, umask, start_new_session, *rest = call[17:]
        ids = (gid, gids or None, uid, umask, *rest)  # None or -1 where the command sets none
        zygote = None
        if self._forkable(args, executable, preexec_fn, pass_fds, shell, ids, env):
            environment = {str(k): str(v) for k, v in (os.environ if env is None else env).items()}
            zygote = _zygote_for(environment)
        pid = None
        if zygote is not None:
            sigint = signal.getsignal(signal.SIGINT)
            request = {
                "args": [str(a) for a in args[3:]],
                "cwd": str(Path(cwd).resolve()) if cwd is not None else os.getcwd(),
                "env": environment,
                "new_session": bool(start_new_session),
                "sigint_ignored": preexec_fn is None and sigint == signal.SIG_IGN,
            }
            fds = [fd if fd != -1 else default for fd, default in ((p2cread, 0), (c2pwrite, 1), (errwrite, 2))]
            pid = zygote.start(request, fds)
        if pid is None:
            return super()._execute_child(*call)
        self._zygote = zygote
        self.pid = pid
        self._child_created = True
        self._close_pipe_fds(p2cread, p2cwrite, c2pread, c2pwrite, errread, errwrite)  # as Popen does

    def _internal_poll(self, _deadstate=None, **_):
        if self._zygote is None:
            return super()._internal_poll(_deadstate)
        if self.returncode is None:
            status = self._zygote.status(self.pid, block=False)
            if status is not None:
                self._handle_exitstatus(status)
        return self.returncode

    def _try_wait(self, wait_flags):
        if self._zygote is None:
            return super()._try_wait(wait_flags)
        status = self._zygote.status(self.pid, block=not (wait_flags & os.WNOHANG))
        return (0, 0) if status is None else (self.pid, status)


def install() -> None:
    """Route this process's `subprocess` calls of the CLI through zygotes (conftest calls it)."""
    if enabled():
        subprocess.Popen = ForkingPopen


if __name__ == "__main__":
    sys.path[0] = str(ROOT)  # not tests/, this file's directory
    _zygote_main(int(sys.argv[1]))
