"""The `local` backend: plain subprocesses in a temporary directory, WITHOUT isolation.

For development on systems without bubblewrap (macOS, containers without user namespaces).
Never run untrusted code with it: commands run as you, see your whole filesystem, your network
and your processes.

The sandbox is a temp dir `root` holding `app/ tmp/ tests/ logs/`. Sandbox paths map onto it
(`/app/x` -> `root/app/x`); a path outside those four roots is refused with `SandboxError`.
Commands run on the host, so a command that hard-codes `/app` does not find the workspace:
that is the price of no isolation. Commands get these environment variables to find it:

    APP_DIR       the real directory behind /app (also the cwd by default, and HOME)
    SANDBOX_ROOT  the real directory holding app/ tmp/ tests/ logs/
    TMPDIR        the real directory behind /tmp

Limits actually enforced (per process, through rlimits set before the command starts):

    memory_mb   RLIMIT_AS: address space, not resident memory, so allocation fails (MemoryError,
                ENOMEM) rather than an OOM kill; `oom_killed` is never set by this backend.
                Runtimes that reserve large virtual ranges (JVM, Go, some JITs) may need more.
    open_files  RLIMIT_NOFILE
    disk_mb     RLIMIT_FSIZE: the size of any one file written, not the workspace total
    timeout_s   wall time: the command's whole process group is SIGKILLed

Not enforced: `pids` (RLIMIT_NPROC counts every process of the user, not of the sandbox),
`cpus`, the workspace total of `disk_mb`, and `allow_network=False` (the network is the
host's).

Nothing a command starts outlives it: each command runs under `reaper.py`, a child subreaper
that, when the command exits or its deadline passes, kills every process below it, those that
double-forked, called `setsid` or sit in `nohup`/`disown` included (they are re-parented to the
reaper, not to init). So no process of an agent's is left when the verifier runs.

Exit codes: a timed-out command reports 124 with `timed_out=True` (the `timeout(1)` convention,
shared by every backend); a command killed by signal N reports 128+N, as a shell would. When a
command returns, what it left running is killed (see above), as in the bwrap backend where each
exec has its own PID namespace.

Snapshots are full copies of the four directories under `root/.snapshots/<id>`: correct,
not fast.
"""

from __future__ import annotations

import errno
import os
import posixpath
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import threading
import uuid
import warnings
import weakref
from pathlib import Path

from posttrain.sandbox.exit_status import exit_code_of
from posttrain.sandbox.interface import (
    DEFAULT_PATH,
    WORKSPACE_DIRS,
    AsyncSandboxMixin,
    ExecResult,
    SandboxError,
    SandboxSpec,
    command_argv,
    exec_timeout,
)
from posttrain.sandbox.process_runner import kill_group, run_bounded

REAPER = Path(__file__).with_name("reaper.py")
REAPER_GRACE_S = 5.0  # for the reaper to kill and reap what is below it before its group is SIGKILLed


def _under_reaper(argv: list[str], rlimits: list[tuple[int, int]]) -> list[str]:
    return [sys.executable, "-S", "-E", str(REAPER), *(f"{res}:{value}" for res, value in rlimits), "--", *argv]


def _stop_reaper(proc: subprocess.Popen) -> None:
    """The deadline (or close): the reaper kills everything below it, then its group goes."""
    try:
        os.kill(proc.pid, signal.SIGTERM)
        proc.wait(timeout=REAPER_GRACE_S)
    except (ProcessLookupError, subprocess.TimeoutExpired):
        pass
    kill_group(proc.pid)


_warned = False
_warn_lock = threading.Lock()


def _warn_no_isolation() -> None:
    global _warned
    with _warn_lock:
        if _warned:
            return
        _warned = True
    warnings.warn(
        "the local sandbox backend does not isolate anything: commands run as you, on your "
        "filesystem and network; use it for development only (the bwrap backend isolates)",
        RuntimeWarning,
        stacklevel=3,
    )


def _rmtree(path: Path) -> None:
    """Remove a tree even where a command took away its own permissions."""

    def fix(func, p, _exc):
        try:
            parent = os.path.dirname(p)
            os.chmod(parent, stat.S_IRWXU)
            if os.path.isdir(p) and not os.path.islink(p):
                os.chmod(p, stat.S_IRWXU)
            func(p)
        except FileNotFoundError:
            pass

    if path.exists() or path.is_symlink():
        shutil.rmtree(path, onerror=fix)


def _make_rlimits(spec: SandboxSpec) -> list[tuple[int, int]]:
    """(resource, value) pairs computed in the parent, so the forked child only calls setrlimit."""
    try:
        import resource
    except ImportError:  # not a Unix
        return []
    limits = spec.limits
    wanted: list[tuple[int, int]] = [(resource.RLIMIT_NOFILE, limits.open_files)]
    if limits.memory_mb is not None and hasattr(resource, "RLIMIT_AS"):
        wanted.append((resource.RLIMIT_AS, limits.memory_mb * 1024 * 1024))
    if limits.disk_mb is not None and hasattr(resource, "RLIMIT_FSIZE"):
        wanted.append((resource.RLIMIT_FSIZE, limits.disk_mb * 1024 * 1024))
    if hasattr(resource, "RLIMIT_CORE"):
        wanted.append((resource.RLIMIT_CORE, 0))
    out = []
    for res, value in wanted:
        try:
            _soft, hard = resource.getrlimit(res)
        except (ValueError, OSError):
            continue
        if hard != resource.RLIM_INFINITY:
            value = min(value, hard)
        out.append((res, value))
    return out


class LocalSandbox(AsyncSandboxMixin):
    """A sandbox that is a temp directory and plain subprocesses; see the module docstring for
    what it does and does not enforce."""

    def __init__(self, spec: SandboxSpec | None = None, sandbox_id: str | None = None) -> None:
        _warn_no_isolation()
        self.spec = spec or SandboxSpec()
        self.id = sandbox_id or uuid.uuid4().hex[:12]
        if self.spec.rootfs is not None:
            raise SandboxError(
                "the local backend runs commands on the host system and cannot use "
                f"spec.rootfs ({self.spec.rootfs}); use the bwrap backend"
            )
        for layer in self.spec.layers:
            if not Path(layer).is_dir():
                raise SandboxError(f"sandbox layer {layer} is not a directory")
        self._shell = shutil.which("bash") or shutil.which("sh") or "/bin/sh"
        self._rlimits = _make_rlimits(self.spec)
        self._lock = threading.RLock()
        self._running: set[subprocess.Popen] = set()  # the reapers of execs in flight
        self._closed = False
        self.root = Path(tempfile.mkdtemp(prefix=f"posttrain-local-{self.id}-"))
        self._finalizer = weakref.finalize(self, shutil.rmtree, str(self.root), True)
        try:
            for name in WORKSPACE_DIRS:
                (self.root / name).mkdir()
            (self.root / "tmp").chmod(0o1777)
            for layer in self.spec.layers:  # lowest first: later layers override
                for name in WORKSPACE_DIRS:
                    src = Path(layer) / name
                    if src.is_dir():
                        shutil.copytree(src, self.root / name, symlinks=True, dirs_exist_ok=True)
        except BaseException as exc:
            self.close()
            if isinstance(exc, OSError):
                raise SandboxError(f"sandbox {self.id}: cannot copy its layers: {exc}") from exc
            raise

    # ---- paths ----------------------------------------------------------------------------

    @property
    def snapshots_dir(self) -> Path:
        return self.root / ".snapshots"

    def host_path(self, path: str) -> Path:
        """The real path behind a sandbox path (`/app/x` -> `root/app/x`); a relative path is
        taken relative to the spec's workdir."""
        self._check_open()
        if not isinstance(path, str):
            path = os.fspath(path)
        if not path.startswith("/"):
            path = posixpath.join(self.spec.workdir, path)
        norm = posixpath.normpath(path).lstrip("/")
        first = norm.split("/", 1)[0]
        if first not in WORKSPACE_DIRS:
            raise SandboxError(
                f"{path} is outside the local sandbox's workspace: it maps only "
                f"{', '.join('/' + d for d in WORKSPACE_DIRS)}"
            )
        return self.root / norm

    def _check_open(self) -> None:
        if self._closed:
            raise SandboxError(f"sandbox {self.id} is closed")

    # ---- commands -------------------------------------------------------------------------

    def _environment(self, extra: dict[str, str] | None) -> dict[str, str]:
        env = {
            "PATH": os.environ.get("PATH", DEFAULT_PATH),
            "HOME": str(self.root / "app"),
            "LANG": os.environ.get("LANG", "C.UTF-8"),
        }
        env.update(self.spec.env)
        env.update(extra or {})
        env.update(
            {
                "APP_DIR": str(self.root / "app"),
                "SANDBOX_ROOT": str(self.root),
                "TMPDIR": str(self.root / "tmp"),
            }
        )
        return env

    def exec(
        self,
        cmd: str | list[str],
        timeout: float | None = None,
        stdin: str | bytes | None = None,
        env: dict[str, str] | None = None,
        workdir: str | None = None,
    ) -> ExecResult:
        self._check_open()
        argv = command_argv(cmd, self._shell)
        timeout_s = exec_timeout(timeout, self.spec.limits)
        cwd = self.host_path(workdir or self.spec.workdir)
        if not cwd.is_dir():
            raise SandboxError(f"workdir {workdir or self.spec.workdir} is not a directory in sandbox {self.id}")
        data = stdin.encode("utf-8") if isinstance(stdin, str) else stdin

        procs: list[subprocess.Popen] = []

        def track(proc) -> None:  # close() from another thread kills what is in flight
            procs.append(proc)
            with self._lock:
                self._running.add(proc)

        try:
            raw = run_bounded(
                _under_reaper(argv, self._rlimits),
                self._environment(env),
                data,
                timeout_s,
                self.spec.limits.output_bytes,
                kill_tree=_stop_reaper,
                cwd=cwd,
                on_start=track,
            )
        finally:
            with self._lock:
                self._running.difference_update(procs)
        return ExecResult(
            exit_code=exit_code_of(raw.returncode, raw.timed_out),
            stdout=raw.stdout.decode("utf-8", errors="replace"),
            stderr=raw.stderr.decode("utf-8", errors="replace"),
            duration_s=raw.duration_s,
            timed_out=raw.timed_out,
            stdout_truncated=raw.stdout_truncated,
            stderr_truncated=raw.stderr_truncated,
            # without a PID namespace a signal from outside cannot be told from one the command
            # sent itself: only a close() that killed the command in flight is the sandbox's
            sandbox_killed=self._closed and raw.returncode != 0,
        )

    # ---- files ----------------------------------------------------------------------------

    def read_file(self, path: str) -> bytes:
        host = self.host_path(path)
        try:
            return host.read_bytes()
        except FileNotFoundError:
            raise FileNotFoundError(errno.ENOENT, f"{path}: no such file in sandbox {self.id}", path) from None
        except IsADirectoryError:
            raise IsADirectoryError(errno.EISDIR, f"{path}: is a directory in sandbox {self.id}", path) from None

    def write_file(self, path: str, data: str | bytes, mode: int = 0o644) -> None:
        host = self.host_path(path)
        if host.parent == self.root:
            raise SandboxError(f"{path} is a workspace directory, not a file")
        payload = data.encode("utf-8") if isinstance(data, str) else bytes(data)
        host.parent.mkdir(parents=True, exist_ok=True)
        host.write_bytes(payload)
        host.chmod(mode)

    def upload(self, local_dir: Path, target: str) -> None:
        src = Path(local_dir)
        if not src.exists():
            raise FileNotFoundError(errno.ENOENT, "no such directory to upload", str(src))
        if not src.is_dir():
            raise SandboxError(f"upload copies a directory's contents; {src} is not a directory (use write_file)")
        dest = self.host_path(target)
        dest.mkdir(parents=True, exist_ok=True)
        shutil.copytree(src, dest, symlinks=True, dirs_exist_ok=True)

    def download(self, path: str, local_dir: Path) -> Path:
        src = self.host_path(path)
        if not src.exists() and not src.is_symlink():
            raise FileNotFoundError(errno.ENOENT, f"{path}: no such file in sandbox {self.id}", path)
        local_dir = Path(local_dir)
        local_dir.mkdir(parents=True, exist_ok=True)
        dest = local_dir / src.name
        if src.is_dir() and not src.is_symlink():
            shutil.copytree(src, dest, symlinks=True, dirs_exist_ok=True)
        else:
            shutil.copy2(src, dest, follow_symlinks=False)
        return dest

    # ---- snapshots and lifecycle ----------------------------------------------------------

    def snapshot(self) -> str:
        with self._lock:
            self._check_open()
            snap_id = uuid.uuid4().hex[:12]
            tmp = self.snapshots_dir / f".partial-{snap_id}"
            try:
                for name in WORKSPACE_DIRS:
                    shutil.copytree(self.root / name, tmp / name, symlinks=True)
                os.rename(tmp, self.snapshots_dir / snap_id)
            except BaseException:
                _rmtree(tmp)
                raise
            return snap_id

    def restore(self, snapshot_id: str) -> None:
        with self._lock:
            self._check_open()
            snap = self.snapshots_dir / snapshot_id
            if not snapshot_id or "/" in snapshot_id or snapshot_id.startswith(".") or not snap.is_dir():
                raise SandboxError(f"sandbox {self.id} has no snapshot {snapshot_id!r}")
            for name in WORKSPACE_DIRS:
                _rmtree(self.root / name)
                shutil.copytree(snap / name, self.root / name, symlinks=True)

    def close(self) -> None:
        with self._lock:
            if self._closed:
                return
            self._closed = True
            running = list(self._running)
        for proc in running:
            _stop_reaper(proc)
        _rmtree(self.root)
        self._finalizer.detach()

    def __repr__(self) -> str:
        return f"LocalSandbox(id={self.id!r}, root={str(self.root)!r}{', closed' if self._closed else ''})"
