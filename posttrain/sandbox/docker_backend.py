"""The `docker` backend: one long-lived container per sandbox, driven through the Docker SDK.

For machines that have a Docker engine (and no bubblewrap/root). Install the SDK with
`pip install posttrain[docker]`; `docker_available()` says whether an engine is reachable.

The container runs `sleep infinity` under Docker's init (which reaps orphans), with no network
unless `spec.allow_network`, and the spec's limits as container limits: `memory_mb` -> mem_limit
(and memswap_limit, so no swap), `pids` -> pids_limit, `cpus` -> nano_cpus, `open_files` ->
the nofile ulimit. `disk_mb` is NOT enforced (Docker can only cap a container's writable layer
on overlay2 over xfs with project quotas). The layers are copied in as one tar at start, lowest
first, so later layers override earlier ones.

Each exec runs inside the container as

    sh -c WRAPPER sh STDIN_FILE TIMEOUT CMD...    (WRAPPER runs `timeout -s KILL TIMEOUT CMD...`)

`timeout(1)` puts the command in its own process group and SIGKILLs that whole group at the
deadline (so `timeout` itself dies with 137); when the command returns, the wrapper kills what
it left in the group, so nothing outlives its command unless it left the group (`setsid`).
Classification (`exit_status.classify_exit`):

  * exit 137 and the exec lasted at least its timeout -> `timed_out=True`, exit_code 124 (the
    convention every backend shares);
  * exit 137 before the timeout with a memory limit set -> `oom_killed=True`. Docker's
    `State.OOMKilled` only covers the container's PID 1, and the kernel's OOM killer SIGKILLs
    the exec'd process, so a SIGKILL under a memory limit is taken for an OOM kill. A command
    that SIGKILLs itself under a memory limit is misreported: that is the heuristic's price.

stdin is copied into the container as a file that the wrapper opens and unlinks before the
command starts. Snapshots are `docker commit`s tagged `posttrain-snap:<id>`; `restore()`
replaces the container by a new one from that image (what ran in it is gone, as after any
exec). `close()` removes the container and the snapshot images.
"""

from __future__ import annotations

import errno
import io
import os
import posixpath
import tarfile
import tempfile
import threading
import time
import uuid
import weakref
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from posttrain.sandbox.exit_status import SIGKILL_EXIT_CODE, TIMEOUT_EXIT_CODE, classify_exit
from posttrain.sandbox.interface import (
    WORKSPACE_DIRS,
    AsyncSandboxMixin,
    ExecResult,
    SandboxError,
    SandboxSpec,
    command_argv,
    exec_timeout,
)
from posttrain.sandbox.process_runner import BoundedCapture

DEFAULT_IMAGE = "debian:bookworm-slim"
SNAPSHOT_REPOSITORY = "posttrain-snap"
INSTALL_HINT = "the Docker SDK for Python is not installed: pip install posttrain[docker]"
_STREAM_GRACE_S = 30.0  # how long past its timeout an exec's output stream may stay open
_SPOOL_BYTES = 32 << 20  # tars bigger than this go to a temp file

# Runs as `sh -c _WRAPPER sh STDIN_FILE TIMEOUT CMD...` (see the module docstring).
_WRAPPER = (
    "f=$1; t=$2; shift 2; "
    'if [ -z "$f" ]; then exec 3</dev/null; '
    'elif [ -r "$f" ]; then exec 3<"$f"; rm -f -- "$f"; '
    'else echo "posttrain: stdin file $f is missing" >&2; exit 125; fi; '
    'timeout -s KILL "$t" "$@" <&3 3<&- & p=$!; exec 3<&-; '
    'wait "$p" 2>/dev/null; rc=$?; kill -s KILL -- "-$p" 2>/dev/null; exit "$rc"'
)
# Kills every process in the container but PID 1 (docker-init), its `sleep infinity` ($1) and
# itself: what an exec whose output never closed left behind.
_KILL_ALL = (
    "for d in /proc/[0-9]*; do p=${d#/proc/}; "
    'case "$p" in 1|"$1"|"$$") ;; *) kill -s KILL "$p" 2>/dev/null;; esac; done; exit 0'
)


def docker_host() -> str:
    return os.environ.get("DOCKER_HOST") or "unix:///var/run/docker.sock"


def _import_docker():
    try:
        import docker
    except ImportError as exc:
        raise SandboxError(INSTALL_HINT) from exc
    return docker


def connect(timeout: float = 60.0):
    """A Docker client that has answered a ping, or SandboxError saying what to do."""
    docker = _import_docker()
    client = None
    try:
        client = docker.from_env(timeout=timeout)
        client.ping()
    except Exception as exc:  # DockerException, requests' errors, a socket without a daemon
        if client is not None:
            try:
                client.close()
            except Exception:
                pass
        raise SandboxError(
            f"no Docker engine reachable at {docker_host()}: start dockerd or use the bwrap backend ({exc})"
        ) from exc
    return client


def docker_available() -> tuple[bool, str]:
    """(True, where) when the SDK is installed and an engine answers; else (False, why not)."""
    try:
        client = connect(timeout=5)
    except SandboxError as exc:
        return False, str(exc)
    client.close()
    return True, f"Docker engine reachable at {docker_host()}"


# ---- pure helpers (no engine needed) --------------------------------------------------------


def container_kwargs(spec: SandboxSpec, image: str, name: str) -> dict[str, Any]:
    """The `client.containers.run(**kwargs)` arguments of a sandbox's container."""
    limits = spec.limits
    kwargs: dict[str, Any] = {
        "image": image,
        "command": ["sleep", "infinity"],
        "name": name,
        "detach": True,
        "init": True,  # docker-init as PID 1 reaps what execs orphan (zombies hold pids)
        "hostname": "sandbox",
        "working_dir": spec.workdir,
        "environment": dict(spec.env),
        "labels": {"posttrain.sandbox": name},
        "security_opt": ["no-new-privileges"],
        "ulimits": [
            {"name": "nofile", "soft": limits.open_files, "hard": limits.open_files},
            {"name": "core", "soft": 0, "hard": 0},
        ],
    }
    if not spec.allow_network:
        kwargs["network_mode"] = "none"
    if limits.memory_mb is not None:
        kwargs["mem_limit"] = f"{limits.memory_mb}m"
        kwargs["memswap_limit"] = f"{limits.memory_mb}m"  # equal to mem_limit: no swap
    if limits.pids is not None:
        kwargs["pids_limit"] = limits.pids
    if limits.cpus is not None:
        kwargs["nano_cpus"] = int(round(limits.cpus * 1e9))
    return kwargs


def _root_owned(info: tarfile.TarInfo) -> tarfile.TarInfo:
    info.uid = info.gid = 0
    info.uname = info.gname = "root"
    return info


def _new_spool() -> IO[bytes]:
    return tempfile.SpooledTemporaryFile(max_size=_SPOOL_BYTES)


def layers_tar(layers: list[Path], fileobj: IO[bytes] | None = None) -> IO[bytes]:
    """A tar, to extract at `/`, of the workspace directories and then each layer's contents,
    lowest first: extracting it in order leaves the later layers' files on top. Rewound."""
    out = fileobj if fileobj is not None else _new_spool()
    with tarfile.open(fileobj=out, mode="w") as tar:
        for name in WORKSPACE_DIRS:
            info = tarfile.TarInfo(name)
            info.type = tarfile.DIRTYPE
            info.mode = 0o1777 if name == "tmp" else 0o755
            info.mtime = int(time.time())
            tar.addfile(_root_owned(info))
        for layer in layers:
            layer = Path(layer)
            if not layer.is_dir():
                raise SandboxError(f"sandbox layer {layer} is not a directory")
            for child in sorted(layer.iterdir()):
                tar.add(child, arcname=child.name, filter=_root_owned)
    out.seek(0)
    return out


def file_tar(path: str, data: bytes, mode: int = 0o644) -> bytes:
    """A tar, to extract at `/`, holding one file at the absolute sandbox `path`."""
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tar:
        info = tarfile.TarInfo(path.lstrip("/"))
        info.size = len(data)
        info.mode = mode
        info.mtime = int(time.time())
        tar.addfile(_root_owned(info), io.BytesIO(data))
    return buf.getvalue()


def dir_tar(local_dir: Path, target: str, fileobj: IO[bytes] | None = None) -> IO[bytes]:
    """A tar, to extract at `/`, of `local_dir`'s contents placed under the sandbox dir `target`."""
    out = fileobj if fileobj is not None else _new_spool()
    base = target.strip("/")
    with tarfile.open(fileobj=out, mode="w") as tar:
        for child in sorted(Path(local_dir).iterdir()):
            tar.add(child, arcname=f"{base}/{child.name}" if base else child.name, filter=_root_owned)
    out.seek(0)
    return out


def format_timeout(timeout_s: float) -> str:
    """Seconds as `timeout(1)` reads them: never in exponent notation, never 0 (which would
    mean no timeout at all)."""
    return format(max(timeout_s, 0.001), ".3f")


def wrap_command(argv: list[str], timeout_s: float, stdin_path: str | None = None) -> list[str]:
    """The argv run in the container for `argv` under a timeout (see the module docstring)."""
    t = format_timeout(timeout_s)
    return ["sh", "-c", _WRAPPER, "sh", stdin_path or "", t, *argv]


def sandbox_path(path: str, workdir: str) -> str:
    """An absolute, normalized sandbox path; a relative one is taken relative to `workdir`."""
    path = os.fspath(path)
    if not path.startswith("/"):
        path = posixpath.join(workdir, path)
    return "/" + posixpath.normpath(path).lstrip("/")


def _download_filter(member: tarfile.TarInfo, dest: str) -> tarfile.TarInfo | None:
    """tarfile's `data` filter, except that links leading out of the download are skipped
    rather than failing it (a venv's absolute symlinks, say)."""
    try:
        return tarfile.data_filter(member, dest)
    except (tarfile.AbsoluteLinkError, tarfile.LinkOutsideDestinationError):
        return None


@dataclass
class _Resources:
    """What `close()` (or the finalizer of a forgotten sandbox) must remove."""

    container_id: str | None = None
    images: list[str] = field(default_factory=list)


def _release(client, resources: _Resources) -> None:
    if resources.container_id is not None:
        try:
            client.api.remove_container(resources.container_id, force=True, v=True)
        except Exception:
            pass
        resources.container_id = None
    for image in list(resources.images):
        try:
            client.api.remove_image(image, force=True)
        except Exception:
            pass
        resources.images.remove(image)
    try:
        client.close()
    except Exception:
        pass


class DockerSandbox(AsyncSandboxMixin):
    def __init__(
        self, spec: SandboxSpec | None = None, sandbox_id: str | None = None, image: str = DEFAULT_IMAGE
    ) -> None:
        self.spec = spec or SandboxSpec()
        self.id = sandbox_id or uuid.uuid4().hex[:12]
        image = self.spec.image or image
        self.image = image
        self.name = f"posttrain-{self.id}"
        if self.spec.rootfs is not None:
            raise SandboxError(
                f"the docker backend takes its root filesystem from an image (image=...), "
                f"not spec.rootfs ({self.spec.rootfs})"
            )
        for layer in self.spec.layers:
            if not Path(layer).is_dir():
                raise SandboxError(f"sandbox layer {layer} is not a directory")
        self._docker = _import_docker()
        self._client = connect(timeout=300)  # API calls; a commit of a big workspace takes a while
        self._lock = threading.RLock()
        self._api_lock = threading.Lock()
        self._closed = False
        self._resources = _Resources()
        self._finalizer = weakref.finalize(self, _release, self._client, self._resources)
        self._container = None
        self._shell = "sh"
        self._keeper_pid = ""
        try:
            self._ensure_image(image)
            self._start(image)
            with layers_tar(self.spec.layers) as tar:
                self._put_archive(tar, "layers")
        except BaseException:
            self.close()
            raise

    # ---- container lifecycle --------------------------------------------------------------

    def _ensure_image(self, image: str) -> None:
        errors = self._docker.errors
        try:
            self._client.images.get(image)
            return
        except errors.ImageNotFound:
            pass
        except errors.APIError as exc:
            raise SandboxError(f"cannot inspect image {image}: {exc}") from exc
        try:
            self._client.images.pull(image)
        except errors.APIError as exc:
            raise SandboxError(
                f"image {image} is not present and cannot be pulled: {exc}; "
                f"pull or build it first (docker pull {image})"
            ) from exc

    def _start(self, image: str) -> None:
        try:
            self._container = self._client.containers.run(**container_kwargs(self.spec, image, self.name))
        except self._docker.errors.APIError as exc:
            raise SandboxError(f"sandbox {self.id}: cannot start a container from {image}: {exc}") from exc
        self._resources.container_id = self._container.id
        code, out, _err = self._raw_exec(
            [
                "sh",
                "-c",
                "command -v bash >/dev/null && echo bash; command -v timeout >/dev/null && echo timeout; "
                'for d in /proc/[0-9]*; do p=${d#/proc/}; [ "$p" = 1 ] || [ "$p" = "$$" ] || echo "pid $p"; done',
            ],
            timeout_s=60,
        )
        found = out.split()
        if code != 0 or "timeout" not in found:
            raise SandboxError(
                f"image {image} lacks `timeout` (coreutils or busybox), which the docker backend "
                "needs to enforce exec timeouts; use an image that has it"
            )
        self._shell = "bash" if "bash" in found else "sh"
        pids = [found[i + 1] for i, word in enumerate(found[:-1]) if word == "pid"]
        self._keeper_pid = pids[0] if len(pids) == 1 else ""

    def _check_open(self) -> None:
        if self._closed:
            raise SandboxError(f"sandbox {self.id} is closed")

    def _api_error(self, what: str, exc: Exception) -> SandboxError:
        state = ""
        try:
            self._container.reload()
            state = f" (container {self._container.status})"
        except Exception:
            pass
        return SandboxError(f"sandbox {self.id}: {what}: {exc}{state}")

    # ---- commands -------------------------------------------------------------------------

    def _raw_exec(
        self,
        argv: list[str],
        timeout_s: float,
        env: dict[str, str] | None = None,
        workdir: str | None = None,
        output_limit: int = 1 << 20,
    ):
        """Run argv as is; returns (exit_code, stdout, stderr) as text. For internal probes."""
        code, out, err, _duration, _overrun = self._stream_exec(argv, timeout_s, env, workdir, output_limit)
        return code, out.text(), err.text()

    def _stream_exec(self, argv, timeout_s, env, workdir, output_limit):
        api = self._client.api
        out, err = BoundedCapture(output_limit), BoundedCapture(output_limit)
        started = time.monotonic()
        read_timeout = timeout_s + _STREAM_GRACE_S
        try:
            created = api.exec_create(
                self._container.id, argv, stdout=True, stderr=True, environment=env or None, workdir=workdir
            )
            exec_id = created["Id"]
            with self._api_lock:  # the client's timeout becomes this stream's socket timeout
                previous = api.timeout
                api.timeout = read_timeout
                try:
                    stream = api.exec_start(exec_id, stream=True, demux=True)
                finally:
                    api.timeout = previous
        except self._docker.errors.APIError as exc:
            raise self._api_error("exec failed", exc) from exc
        overrun = False
        deadline = started + read_timeout
        try:
            for stdout_chunk, stderr_chunk in stream:
                out.feed(stdout_chunk)
                err.feed(stderr_chunk)
                if time.monotonic() > deadline:
                    overrun = True
                    break
        except Exception as exc:  # a socket timeout: the output stayed open past the deadline
            if time.monotonic() < deadline - _STREAM_GRACE_S / 2:
                raise self._api_error("exec stream broke", exc) from exc
            overrun = True
        code = None
        for _ in range(100):
            try:
                info = api.exec_inspect(exec_id)
            except self._docker.errors.APIError as exc:
                raise self._api_error("exec inspect failed", exc) from exc
            if not info.get("Running"):
                code = info.get("ExitCode")
                break
            if overrun:
                break
            time.sleep(0.02)
        duration = time.monotonic() - started
        if overrun or code is None:
            self._kill_all()
            code = SIGKILL_EXIT_CODE
        return code, out, err, duration, overrun

    def _kill_all(self) -> None:
        try:
            self._container.exec_run(["sh", "-c", _KILL_ALL, "sh", self._keeper_pid or "0"])
        except Exception:
            pass

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
        stdin_path = None
        if stdin is not None:
            data = stdin.encode("utf-8") if isinstance(stdin, str) else bytes(stdin)
            stdin_path = f"/.posttrain-stdin-{uuid.uuid4().hex}"
            self._put_archive(file_tar(stdin_path, data, 0o600), "stdin")
        code, out, err, duration, overrun = self._stream_exec(
            wrap_command(argv, timeout_s, stdin_path),
            timeout_s,
            env,
            sandbox_path(workdir or self.spec.workdir, self.spec.workdir),
            self.spec.limits.output_bytes,
        )
        oom_reported = False
        if code == SIGKILL_EXIT_CODE and not overrun and duration < timeout_s:
            try:
                self._container.reload()
                oom_reported = bool(self._container.attrs.get("State", {}).get("OOMKilled"))
            except Exception:
                pass
        if overrun:
            exit_code, timed_out, oom = TIMEOUT_EXIT_CODE, True, False
        else:
            exit_code, timed_out, oom = classify_exit(
                code, duration, timeout_s, self.spec.limits.memory_mb is not None, oom_reported
            )
        return ExecResult(
            exit_code=exit_code,
            stdout=out.text(),
            stderr=err.text(),
            duration_s=duration,
            timed_out=timed_out,
            oom_killed=oom,
            stdout_truncated=out.truncated,
            stderr_truncated=err.truncated,
        )

    # ---- files ----------------------------------------------------------------------------

    def _put_archive(self, data, what: str) -> None:
        try:
            ok = self._container.put_archive("/", data)
        except self._docker.errors.APIError as exc:
            raise self._api_error(f"cannot copy {what} in", exc) from exc
        if not ok:
            raise SandboxError(f"sandbox {self.id}: cannot copy {what} in")

    def _get_archive(self, path: str) -> IO[bytes]:
        try:
            stream, _stat = self._container.get_archive(path)
        except self._docker.errors.NotFound:
            raise FileNotFoundError(errno.ENOENT, f"{path}: no such file in sandbox {self.id}", path) from None
        except self._docker.errors.APIError as exc:
            raise self._api_error(f"cannot copy {path} out", exc) from exc
        spool = _new_spool()
        for chunk in stream:
            spool.write(chunk)
        spool.seek(0)
        return spool

    def read_file(self, path: str) -> bytes:
        self._check_open()
        p = sandbox_path(path, self.spec.workdir)
        for _hop in range(16):
            with self._get_archive(p) as spool, tarfile.open(fileobj=spool) as tar:
                member = tar.next()
                if member is None:
                    raise FileNotFoundError(errno.ENOENT, f"{path}: no such file in sandbox {self.id}", path)
                if member.isdir():
                    raise IsADirectoryError(errno.EISDIR, f"{path}: is a directory in sandbox {self.id}", path)
                if member.issym():
                    p = sandbox_path(member.linkname, posixpath.dirname(p))
                    continue
                fh = tar.extractfile(member)
                if fh is None:
                    raise SandboxError(f"read_file {path}: not a regular file in sandbox {self.id}")
                return fh.read()
        raise SandboxError(f"read_file {path}: too many levels of symbolic links")

    def write_file(self, path: str, data: str | bytes, mode: int = 0o644) -> None:
        self._check_open()
        p = sandbox_path(path, self.spec.workdir)
        if p == "/":
            raise SandboxError("write_file needs a file path, not /")
        payload = data.encode("utf-8") if isinstance(data, str) else bytes(data)
        self._put_archive(file_tar(p, payload, mode), p)

    def upload(self, local_dir: Path, target: str) -> None:
        self._check_open()
        src = Path(local_dir)
        if not src.exists():
            raise FileNotFoundError(errno.ENOENT, "no such directory to upload", str(src))
        if not src.is_dir():
            raise SandboxError(f"upload copies a directory's contents; {src} is not a directory (use write_file)")
        t = sandbox_path(target, self.spec.workdir)
        if not any(src.iterdir()):
            code, _out, err = self._raw_exec(["mkdir", "-p", "--", t], timeout_s=60)
            if code != 0:
                raise SandboxError(f"upload to {t}: {err.strip()}")
            return
        with dir_tar(src, t) as tar:
            self._put_archive(tar, str(src))

    def download(self, path: str, local_dir: Path) -> Path:
        self._check_open()
        p = sandbox_path(path, self.spec.workdir)
        local_dir = Path(local_dir)
        local_dir.mkdir(parents=True, exist_ok=True)
        with self._get_archive(p) as spool, tarfile.open(fileobj=spool) as tar:
            try:
                tar.extractall(local_dir, filter=_download_filter)
            except tarfile.FilterError as exc:
                raise SandboxError(f"download {path}: refused an unsafe archive member: {exc}") from exc
        return local_dir / (posixpath.basename(p) or "root")

    # ---- snapshots and lifecycle ----------------------------------------------------------

    def snapshot(self) -> str:
        with self._lock:
            self._check_open()
            snap_id = uuid.uuid4().hex[:12]
            try:
                self._container.commit(repository=SNAPSHOT_REPOSITORY, tag=snap_id, pause=True)
            except self._docker.errors.APIError as exc:
                raise self._api_error("snapshot (docker commit) failed", exc) from exc
            self._resources.images.append(f"{SNAPSHOT_REPOSITORY}:{snap_id}")
            return snap_id

    def restore(self, snapshot_id: str) -> None:
        with self._lock:
            self._check_open()
            image = f"{SNAPSHOT_REPOSITORY}:{snapshot_id}"
            if image not in self._resources.images:
                raise SandboxError(f"sandbox {self.id} has no snapshot {snapshot_id!r}")
            try:
                self._container.remove(force=True, v=True)
            except self._docker.errors.NotFound:
                pass
            except self._docker.errors.APIError as exc:
                raise self._api_error("restore: cannot remove the container", exc) from exc
            self._resources.container_id = None
            self._start(image)

    def close(self) -> None:
        with self._lock:
            if self._closed:
                return
            self._closed = True
        self._finalizer()  # removes the container and snapshot images, closes the client

    def __repr__(self) -> str:
        return f"DockerSandbox(id={self.id!r}, image={self.image!r}{', closed' if self._closed else ''})"
