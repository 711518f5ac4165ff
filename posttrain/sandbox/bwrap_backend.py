"""The `bwrap` backend: bubblewrap namespaces, an overlayfs workspace, cgroup limits.

Each exec runs

    sh (joins the sandbox's cgroups, sets rlimits)
      -> unshare --mount (a private mount namespace)
        -> mount the overlay stack
          -> bwrap (user, pid, ipc, uts, net, cgroup namespaces; system dirs read-only)
            -> the command

so between commands nothing runs and nothing is mounted: a sandbox is a directory and a few
cgroups, which is why hundreds fit on one machine and `close()` leaves nothing behind.
"""

from __future__ import annotations

import io
import os
import shlex
import shutil
import subprocess
import tarfile
import threading
import uuid
from pathlib import Path

from posttrain.sandbox.cgroups import SandboxCgroup
from posttrain.sandbox.exit_status import exit_code_of
from posttrain.sandbox.interface import (
    DEFAULT_PATH,
    AsyncSandboxMixin,
    ExecResult,
    SandboxError,
    SandboxSpec,
    command_argv,
    directory_tar,
    exec_timeout,
)
from posttrain.sandbox.launcher_build import launcher_path
from posttrain.sandbox.overlay import OVERLAY_DIRS, OverlayWorkspace, skeleton_layer
from posttrain.sandbox.process_runner import RawResult, kill_group, run_bounded, run_passthrough
from posttrain.sandbox.system_view import minimal_etc, system_binds, system_lowers

_FILE_OP_LIMIT = 1 << 30  # bytes a read_file/download may move through the sandbox boundary


def default_base_dir() -> Path:
    return Path(os.environ.get("POSTTRAIN_SANDBOX_DIR", "/tmp/posttrain-sandboxes"))


def check_bwrap() -> str:
    path = shutil.which("bwrap")
    if path is None:
        raise SandboxError(
            "bubblewrap is not installed: run `make setup` as root (it installs the Debian package "
            "bubblewrap), or `apt-get install bubblewrap`, or use the `local` backend for development"
        )
    if os.geteuid() != 0:
        raise SandboxError(
            "the bwrap backend mounts overlayfs and manages cgroups, so it needs root; "
            "run as root or use the `local` backend"
        )
    return path


def _raise_if_start_failed(sandbox_id: str, raw: RawResult) -> None:
    """The launcher (exit 125) and bwrap itself (a `bwrap:` message, nothing on stdout) fail
    before the command runs: that is a broken sandbox, not a failed command."""
    message = raw.stderr.decode(errors="replace").strip()
    launcher_failed = raw.returncode == 125 and message.startswith("posttrain sandbox launcher:")
    bwrap_failed = raw.returncode == 1 and not raw.stdout and message.startswith("bwrap:")
    if launcher_failed or bwrap_failed:
        raise SandboxError(
            f"sandbox {sandbox_id} failed to start: {message.splitlines()[-1]} "
            "(check that you are root, that /tmp allows overlayfs, and `posttrain sandbox gc`)"
        )


class BwrapSandbox(AsyncSandboxMixin):
    def __init__(
        self, spec: SandboxSpec | None = None, sandbox_id: str | None = None, base_dir: Path | None = None
    ) -> None:
        self.spec = spec or SandboxSpec()
        self.id = sandbox_id or uuid.uuid4().hex[:12]
        self._bwrap = check_bwrap()
        base = base_dir or default_base_dir()
        base.mkdir(parents=True, exist_ok=True)
        for layer in self.spec.layers:
            if not layer.is_dir():
                raise SandboxError(f"sandbox layer {layer} is not a directory")
        self._etc = minimal_etc(base) if self.spec.rootfs is None else None
        system = system_lowers(base) if self.spec.system_writable and self.spec.rootfs is None else None
        limits = self.spec.limits
        self._closed = False
        self._lock = threading.Lock()
        self.cgroup = SandboxCgroup.create(f"sbx-{self.id}", limits.memory_mb, limits.pids, limits.cpus)
        try:
            self.workspace = OverlayWorkspace(
                base / "sandboxes" / self.id, self.spec.layers, skeleton_layer(base), limits.disk_mb, system
            )
        except Exception as exc:
            self.cgroup.remove()
            raise SandboxError(f"sandbox {self.id}: cannot create its workspace: {exc}") from exc

    # ---- commands -------------------------------------------------------------------------

    def exec(self, cmd, timeout=None, stdin=None, env=None, workdir=None, binds=None) -> ExecResult:
        """`binds` ({sandbox path: host directory}) are mounted for this command only, over what
        the workspace holds there (a `private_dir()` the sandbox's other commands never see)."""
        raw, oom = self._run(cmd, timeout, stdin, env, workdir, self.spec.limits.output_bytes, binds)
        # bwrap reports a command that a signal killed as 128 + N; only bwrap itself killed (from
        # the host: the command's processes cannot see it) or closed under it ends by a signal
        killed = raw.returncode < 0 and not raw.timed_out and not oom
        return ExecResult(
            exit_code=exit_code_of(raw.returncode, raw.timed_out, oom),
            stdout=raw.stdout.decode("utf-8", errors="replace"),
            stderr=raw.stderr.decode("utf-8", errors="replace"),
            duration_s=raw.duration_s,
            timed_out=raw.timed_out,
            oom_killed=oom,
            stdout_truncated=raw.stdout_truncated,
            stderr_truncated=raw.stderr_truncated,
            sandbox_killed=killed or (self._closed and raw.returncode != 0),
        )

    def _run(self, cmd, timeout, stdin, env, workdir, output_limit, binds=None) -> tuple[RawResult, bool]:
        if self._closed:
            raise SandboxError(f"sandbox {self.id} is closed")
        argv = command_argv(cmd)
        limits = self.spec.limits
        data = stdin.encode() if isinstance(stdin, str) else stdin
        oom_before = self.cgroup.oom_kills()
        with self._lock:  # one mount of the stack at a time: overlayfs forbids a shared upper
            raw = run_bounded(
                self._launcher(argv, workdir or self.spec.workdir, binds),
                env=self._environment(env),
                stdin=data,
                timeout_s=exec_timeout(timeout, limits),
                output_limit=output_limit,
                kill_tree=self._kill_tree,  # nothing may outlive its command
            )
        _raise_if_start_failed(self.id, raw)
        return raw, self.cgroup.oom_kills() > oom_before

    def exec_streaming(self, cmd, timeout=None, env=None, workdir=None) -> ExecResult:
        """Run with this process's stdout/stderr passed straight through (for the CLI): the
        result carries the exit status, not the output."""
        if self._closed:
            raise SandboxError(f"sandbox {self.id} is closed")
        argv = command_argv(cmd)
        limit = exec_timeout(timeout, self.spec.limits)
        oom_before = self.cgroup.oom_kills()
        with self._lock:
            raw = run_passthrough(
                self._launcher(argv, workdir or self.spec.workdir),
                self._environment(env),
                limit,
                kill_tree=self._kill_tree,
            )
            self.cgroup.kill_all()
        oom = self.cgroup.oom_kills() > oom_before
        return ExecResult(
            exit_code_of(raw.returncode, raw.timed_out, oom),
            "",
            "",
            raw.duration_s,
            timed_out=raw.timed_out,
            oom_killed=oom,
        )

    def _kill_tree(self, proc) -> None:
        kill_group(proc.pid)
        self.cgroup.kill_all()

    def _environment(self, extra: dict[str, str] | None) -> dict[str, str]:
        env = {"PATH": DEFAULT_PATH, "HOME": "/root", "LANG": "C.UTF-8", "TERM": "dumb", "USER": "root"}
        env.update(self.spec.env)
        env.update(extra or {})
        return env

    def private_dir(self) -> Path:
        """A new empty host directory for `exec(binds=...)`, beside the overlay's layers on the
        sandbox's own storage (its tmpfs counts it against disk_mb) and removed with it: what a
        command writes there is read on the host, from a place no other command had mounted."""
        directory = self.workspace.rw / f"private-{uuid.uuid4().hex[:8]}"
        directory.mkdir(mode=0o700)
        return directory

    def _launcher(self, argv: list[str], workdir: str, binds: dict[str, Path] | None = None) -> list[str]:
        limits = self.spec.limits
        mounts = self.workspace.mounts()
        merged = self.workspace.merged
        bwrap = [
            self._bwrap,
            "--die-with-parent",
            "--new-session",
            "--cap-drop",
            "ALL",
            "--unshare-user",
            "--unshare-pid",
            "--unshare-ipc",
            "--unshare-uts",
            "--unshare-cgroup-try",
            "--hostname",
            "sandbox",
            *([] if self.spec.allow_network else ["--unshare-net"]),
            *system_binds(
                self.spec.rootfs,
                writable={name: self.workspace.system_target(name) for name in self.workspace.system_lowers},
            ),
            *(["--ro-bind", str(self._etc), "/etc"] if self._etc and "etc" not in self.workspace.system_lowers else []),
            "--proc",
            "/proc",
            "--dev",
            "/dev",
        ]
        for name in OVERLAY_DIRS:
            if self.spec.rootfs is None or (self.spec.rootfs / name).is_dir():  # a read-only rootfs has no mkdir
                bwrap += ["--bind", str(merged / name), f"/{name}"]
        for target, host in (binds or {}).items():
            bwrap += ["--bind", str(host), target]
        bwrap += ["--chdir", workdir, "--", *argv]
        procs = [str(f) for f in self.cgroup.procs_files]
        pairs = [str(part) for options, target in mounts for part in (options, target)]
        launcher = launcher_path()
        if launcher:
            return [launcher, str(limits.open_files), *procs, "--", str(len(mounts)), *pairs, *bwrap]
        # The same steps as launcher.c, as a shell pipeline (no C compiler on this host).
        join = "; ".join(f"echo $$ > {shlex.quote(p)}" for p in procs)
        outer = f'{join} && ulimit -n {limits.open_files} && ulimit -c 0; exec "$@"'
        inner = (
            'n=$1; shift; while [ "$n" -gt 0 ]; do mount -t overlay overlay -o "$1" "$2" || exit 125; '
            'shift 2; n=$((n - 1)); done; exec "$@"'
        )
        return [
            "sh",
            "-c",
            outer,
            "sh",
            "unshare",
            "--mount",
            "--propagation",
            "private",
            "--",
            "sh",
            "-c",
            inner,
            "sh",
            str(len(mounts)),
            *pairs,
            *bwrap,
        ]

    # ---- files ----------------------------------------------------------------------------

    def read_file(self, path: str) -> bytes:
        raw, _ = self._run(["cat", "--", path], None, None, None, "/", _FILE_OP_LIMIT)
        if raw.returncode != 0:
            message = raw.stderr.decode(errors="replace").strip()
            if "No such file" in message:
                raise FileNotFoundError(f"{path}: no such file in sandbox {self.id}")
            raise SandboxError(f"read_file {path}: {message}")
        return raw.stdout

    def write_file(self, path: str, data: str | bytes, mode: int = 0o644) -> None:
        payload = data.encode() if isinstance(data, str) else data
        script = 'mkdir -p -- "$(dirname -- "$1")" && cat > "$1" && chmod "$2" -- "$1"'
        raw, _ = self._run(["sh", "-c", script, "sh", path, format(mode, "o")], None, payload, None, "/", 65536)
        if raw.returncode != 0:
            raise SandboxError(f"write_file {path}: {raw.stderr.decode(errors='replace').strip()}")

    def upload(self, local_dir: Path, target: str) -> None:
        script = 'mkdir -p -- "$1" && tar -x -C "$1" --no-same-owner'
        raw, _ = self._run(["sh", "-c", script, "sh", target], None, directory_tar(local_dir), None, "/", 65536)
        if raw.returncode != 0:
            raise SandboxError(f"upload to {target}: {raw.stderr.decode(errors='replace').strip()}")

    def download(self, path: str, local_dir: Path) -> Path:
        parent, name = os.path.split(os.path.normpath(path))
        raw, _ = self._run(["tar", "-c", "-C", parent or "/", "--", name], None, None, None, "/", _FILE_OP_LIMIT)
        if raw.returncode != 0:
            raise FileNotFoundError(f"download {path}: {raw.stderr.decode(errors='replace').strip()}")
        local_dir = Path(local_dir)
        local_dir.mkdir(parents=True, exist_ok=True)
        with tarfile.open(fileobj=io.BytesIO(raw.stdout)) as tar:
            tar.extractall(local_dir, filter="data")
        return local_dir / name

    # ---- snapshots and lifecycle ----------------------------------------------------------

    def snapshot(self) -> str:
        with self._lock:
            return self.workspace.snapshot()

    def restore(self, snapshot_id: str) -> None:
        with self._lock:
            self.workspace.restore(snapshot_id)

    def discard_system_changes(self, select) -> list[str]:
        """Make the system paths `select(path, in_image)` picks read as the image built them
        again (system mode; without it nothing there could change)."""
        with self._lock:
            return self.workspace.discard_system_changes(select)

    def image_has(self, path: str) -> bool:
        return self.workspace.image_has(path)

    def export_layer(self, destination: Path) -> Path:
        """Freeze everything written so far into `destination`, a read-only layer other
        sandboxes can stack (the environment builder caches RUN results this way). Whiteouts
        and opaque-directory xattrs are kept, so deletions carry over."""
        with self._lock:
            snapshot_id = self.workspace.snapshot()
            frozen = dict(self.workspace.snapshots)[snapshot_id]
            destination = Path(destination)
            destination.parent.mkdir(parents=True, exist_ok=True)
            tmp = destination.parent / f".tmp-{destination.name}-{uuid.uuid4().hex[:6]}"
            result = subprocess.run(
                ["cp", "-a", "--preserve=all", str(frozen), str(tmp)], capture_output=True, text=True
            )
            if result.returncode != 0:
                shutil.rmtree(tmp, ignore_errors=True)
                raise SandboxError(f"export_layer to {destination}: {result.stderr.strip()}")
            os.replace(tmp, destination) if not destination.exists() else shutil.rmtree(tmp, ignore_errors=True)
            return destination

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        self.cgroup.remove()
        self.workspace.close()

    def __del__(self):  # a forgotten sandbox still releases its cgroups and tmpfs
        try:
            self.close()
        except Exception:
            pass
