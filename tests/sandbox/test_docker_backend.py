"""The `docker` backend. Without an engine (this machine, CI) what runs is: the errors that say
what to do, and the pure helpers (tars, limits -> container kwargs, the in-container wrapper,
exit classification). The tests that need an engine skip with `docker_available()`'s reason."""

from __future__ import annotations

import io
import os
import random
import shutil
import subprocess
import sys
import tarfile
import time

import pytest

from posttrain.sandbox import docker_backend as db
from posttrain.sandbox.exit_status import classify_exit
from posttrain.sandbox.interface import SandboxError, SandboxLimits, SandboxSpec

# ---- errors that say what to do ---------------------------------------------------------------


def test_missing_sdk_says_how_to_install(monkeypatch):
    monkeypatch.setitem(sys.modules, "docker", None)  # `import docker` raises ImportError
    with pytest.raises(SandboxError, match=r"pip install posttrain\[docker\]"):
        db.DockerSandbox()
    ok, why = db.docker_available()
    assert not ok and "pip install posttrain[docker]" in why


def test_unreachable_engine_says_where_and_what_to_do(monkeypatch, tmp_path):
    pytest.importorskip("docker", reason="the Docker SDK is not installed (pip install posttrain[docker])")
    host = f"unix://{tmp_path}/no-docker.sock"
    monkeypatch.setenv("DOCKER_HOST", host)
    with pytest.raises(SandboxError, match="no Docker engine reachable at " + host) as err:
        db.DockerSandbox()
    assert "start dockerd or use the bwrap backend" in str(err.value)
    ok, why = db.docker_available()
    assert not ok and host in why


def test_spec_rootfs_is_refused_before_connecting(tmp_path):
    with pytest.raises(SandboxError, match="image"):
        db.DockerSandbox(SandboxSpec(rootfs=tmp_path))


# ---- limits -> container kwargs ---------------------------------------------------------------


def test_container_kwargs_map_the_limits():
    spec = SandboxSpec(
        workdir="/app", env={"K": "v"}, limits=SandboxLimits(memory_mb=512, pids=64, cpus=1.5, open_files=256)
    )
    kw = db.container_kwargs(spec, "debian:bookworm-slim", "posttrain-abc")
    assert kw["image"] == "debian:bookworm-slim" and kw["name"] == "posttrain-abc"
    assert kw["command"] == ["sleep", "infinity"] and kw["detach"] is True and kw["init"] is True
    assert kw["network_mode"] == "none"
    assert kw["mem_limit"] == "512m" and kw["memswap_limit"] == "512m"
    assert kw["pids_limit"] == 64
    assert kw["nano_cpus"] == 1_500_000_000
    assert kw["working_dir"] == "/app" and kw["environment"] == {"K": "v"}
    assert {"name": "nofile", "soft": 256, "hard": 256} in kw["ulimits"]


def test_container_kwargs_unlimited_and_networked():
    spec = SandboxSpec(allow_network=True, limits=SandboxLimits(memory_mb=None, pids=None, cpus=None))
    kw = db.container_kwargs(spec, "img", "n")
    for key in ("network_mode", "mem_limit", "memswap_limit", "pids_limit", "nano_cpus"):
        assert key not in kw


def test_container_kwargs_are_accepted_by_the_sdk():
    pytest.importorskip("docker", reason="the Docker SDK is not installed (pip install posttrain[docker])")
    from docker.models.containers import _create_container_args

    kw = db.container_kwargs(SandboxSpec(limits=SandboxLimits(cpus=0.5)), "debian:bookworm-slim", "n")
    kw.pop("detach")  # `run` consumes it before building the create call
    created = _create_container_args({**kw, "version": "1.45"})
    host = created["host_config"]
    assert host["NetworkMode"] == "none" and host["NanoCpus"] == 500_000_000
    assert host["PidsLimit"] == 256 and host["Init"] is True
    assert host["Memory"] == 2048 * 1024 * 1024 == host["MemorySwap"]


# ---- tars -------------------------------------------------------------------------------------


def _extract(fileobj, dest):
    with tarfile.open(fileobj=fileobj) as tar:
        members = tar.getmembers()
        tar.extractall(dest, filter="fully_trusted")
    return members


def test_layers_tar_overrides_lowest_first(tmp_path):
    base, top = tmp_path / "base", tmp_path / "top"
    (base / "app" / "src").mkdir(parents=True)
    (base / "app" / "src" / "a.txt").write_text("base")
    (base / "app" / "keep.txt").write_text("kept")
    (base / "usr" / "local" / "bin").mkdir(parents=True)
    (base / "usr" / "local" / "bin" / "tool").write_text("#!/bin/sh\n")
    (top / "app" / "src").mkdir(parents=True)
    (top / "app" / "src" / "a.txt").write_text("top")
    (top / "tests").mkdir()
    (top / "tests" / "test.sh").write_text("exit 0")
    members = _extract(db.layers_tar([base, top]), tmp_path / "out")
    out = tmp_path / "out"
    assert (out / "app" / "src" / "a.txt").read_text() == "top"
    assert (out / "app" / "keep.txt").read_text() == "kept"
    assert (out / "usr" / "local" / "bin" / "tool").exists()
    assert (out / "tests" / "test.sh").read_text() == "exit 0"
    for name in ("app", "tmp", "tests", "logs"):
        assert (out / name).is_dir()
    assert all(m.uid == 0 and m.gid == 0 and m.uname == "root" for m in members)
    assert next(m for m in members if m.name == "tmp").mode == 0o1777
    with pytest.raises(SandboxError, match="not a directory"):
        db.layers_tar([tmp_path / "missing"])


def test_file_tar_and_dir_tar(tmp_path):
    data = db.file_tar("/app/deep/f.sh", b"#!/bin/sh\n", 0o755)
    with tarfile.open(fileobj=io.BytesIO(data)) as tar:
        (member,) = tar.getmembers()
        assert member.name == "app/deep/f.sh" and member.mode == 0o755 and member.uid == 0
        assert tar.extractfile(member).read() == b"#!/bin/sh\n"
    src = tmp_path / "src"
    (src / "pkg").mkdir(parents=True)
    (src / "pkg" / "m.py").write_text("m")
    (src / "top.txt").write_text("t")
    with db.dir_tar(src, "/app/proj") as tar_file, tarfile.open(fileobj=tar_file) as tar:
        names = sorted(m.name for m in tar.getmembers())
    assert names == ["app/proj/pkg", "app/proj/pkg/m.py", "app/proj/top.txt"]


def test_download_filter_skips_links_out_and_refuses_escapes(tmp_path):
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tar:
        for name, target in (("venv/bin/python", "/usr/bin/python3"), ("venv/up", "../../etc")):
            link = tarfile.TarInfo(name)
            link.type, link.linkname = tarfile.SYMTYPE, target
            tar.addfile(link)
        body = tarfile.TarInfo("venv/ok.txt")
        body.size = 2
        tar.addfile(body, io.BytesIO(b"ok"))
    buf.seek(0)
    with tarfile.open(fileobj=buf) as tar:
        tar.extractall(tmp_path / "d", filter=db._download_filter)
    assert (tmp_path / "d" / "venv" / "ok.txt").read_text() == "ok"
    assert not os.path.lexists(tmp_path / "d" / "venv" / "bin" / "python")
    assert not os.path.lexists(tmp_path / "d" / "venv" / "up")

    evil = io.BytesIO()
    with tarfile.open(fileobj=evil, mode="w") as tar:
        info = tarfile.TarInfo("../escape.txt")
        info.size = 1
        tar.addfile(info, io.BytesIO(b"x"))
    evil.seek(0)
    with tarfile.open(fileobj=evil) as tar, pytest.raises(tarfile.FilterError):
        tar.extractall(tmp_path / "e", filter=db._download_filter)
    assert not (tmp_path / "escape.txt").exists()


# ---- paths, timeouts, classification ----------------------------------------------------------


def test_sandbox_path_and_timeout_format():
    assert db.sandbox_path("/app/../tests/x", "/app") == "/tests/x"
    assert db.sandbox_path("src/a.py", "/app") == "/app/src/a.py"
    assert db.sandbox_path("//app//b/", "/app") == "/app/b"
    assert db.format_timeout(600) == "600.000"
    assert db.format_timeout(1e-3) == "0.001"
    assert db.format_timeout(1e-9) == "0.001"  # 0 would mean no timeout
    assert "e" not in db.format_timeout(12345678.0)


@pytest.mark.parametrize(
    ("raw", "duration", "timeout", "memory_limited", "oom_reported", "expected"),
    [
        (0, 0.1, 10, True, False, (0, False, False)),
        (3, 0.1, 10, True, False, (3, False, False)),
        (137, 10.02, 10, True, False, (124, True, False)),  # killed by timeout(1) at the deadline
        (137, 10.02, 10, False, False, (124, True, False)),
        (137, 0.4, 10, True, False, (137, False, True)),  # SIGKILL under a memory limit: OOM
        (137, 0.4, 10, False, False, (137, False, False)),  # no memory limit: just a SIGKILL
        (137, 0.4, 10, False, True, (137, False, True)),  # the engine said OOMKilled
        (124, 0.4, 10, True, False, (124, False, False)),  # the command's own 124 is not a timeout
    ],
)
def test_classify_exit(raw, duration, timeout, memory_limited, oom_reported, expected):
    assert classify_exit(raw, duration, timeout, memory_limited, oom_reported) == expected


# ---- the in-container wrapper, run here with the host's sh and timeout(1) ---------------------

needs_timeout = pytest.mark.skipif(shutil.which("timeout") is None, reason="no timeout(1) on this host")


def _run_wrapped(argv, timeout_s, stdin_path=None):
    started = time.monotonic()
    done = subprocess.run(db.wrap_command(argv, timeout_s, stdin_path), capture_output=True, timeout=30)
    return done.returncode, done.stdout, done.stderr, time.monotonic() - started


def _gone(pattern, within=2.0):
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        if not subprocess.run(["pgrep", "-f", pattern], capture_output=True).stdout:
            return True
        time.sleep(0.05)
    return False


@needs_timeout
def test_wrapper_timeout_kills_the_tree_and_classifies_as_timeout():
    marker = f"27.{random.randrange(10**8, 10**9)}"
    code, _out, err, duration = _run_wrapped(["bash", "-c", f"(sleep {marker} &) ; sleep {marker}"], 0.5)
    assert code == 137 and duration < 5
    assert err == b""  # the shell's "Killed" notice is not mixed into the command's stderr
    assert classify_exit(code, duration, 0.5, True) == (124, True, False)
    assert _gone(f"sleep {marker}")


@needs_timeout
def test_wrapper_passes_exit_codes_output_and_kills_leftovers():
    marker = f"26.{random.randrange(10**8, 10**9)}"
    code, out, err, duration = _run_wrapped(["sh", "-c", f"sleep {marker} & echo o; echo e >&2; exit 7"], 5)
    assert (code, out, err) == (7, b"o\n", b"e\n") and duration < 3
    assert _gone(f"sleep {marker}")
    assert _run_wrapped(["no-such-program-posttrain"], 5)[0] == 127


@needs_timeout
def test_wrapper_feeds_and_removes_the_stdin_file(tmp_path):
    stdin_file = tmp_path / "stdin"
    stdin_file.write_bytes(b"line one\nline two\n")
    code, out, _err, _ = _run_wrapped(["wc", "-l"], 5, str(stdin_file))
    assert code == 0 and out.strip() == b"2"
    assert not stdin_file.exists()
    code, out, _err, _ = _run_wrapped(["cat"], 5)  # no stdin: /dev/null
    assert code == 0 and out == b""
    assert _run_wrapped(["cat"], 5, str(tmp_path / "missing"))[0] == 125


# ---- with an engine ---------------------------------------------------------------------------


@pytest.fixture(scope="module")
def engine():
    ok, why = db.docker_available()
    if not ok:
        pytest.skip(why)


@pytest.fixture
def sb(engine):
    sandbox = db.DockerSandbox(SandboxSpec(limits=SandboxLimits(memory_mb=256, output_bytes=1024)))
    yield sandbox
    sandbox.close()


def test_engine_exec(sb):
    r = sb.exec("echo out; echo err >&2; exit 3")
    assert (r.exit_code, r.stdout, r.stderr) == (3, "out\n", "err\n")
    assert sb.exec(["printf", "%s|", "a b", "c"]).stdout == "a b|c|"
    assert sb.exec("tr a-z A-Z", stdin="hi").stdout == "HI"
    assert sb.exec("echo $X", env={"X": "y"}).stdout == "y\n"
    assert sb.exec("pwd", workdir="/tests").stdout == "/tests\n"
    flood = sb.exec("head -c 5000 /dev/zero")
    assert len(flood.stdout) == 1024 and flood.stdout_truncated
    timed = sb.exec("(sleep 30 &) ; sleep 30", timeout=1)
    assert timed.timed_out and timed.exit_code == 124
    assert "sleep 30" not in sb.exec("cat /proc/[0-9]*/cmdline | tr '\\0' ' '").stdout


def test_engine_files_and_snapshots(sb, tmp_path):
    sb.write_file("/app/a/b.txt", "hello")
    assert sb.read_file("/app/a/b.txt") == b"hello"
    with pytest.raises(FileNotFoundError, match="/app/none"):
        sb.read_file("/app/none")
    (tmp_path / "up").mkdir()
    (tmp_path / "up" / "u.txt").write_text("u")
    sb.upload(tmp_path / "up", "/tests")
    assert sb.exec("cat /tests/u.txt").stdout == "u"
    assert (sb.download("/app/a", tmp_path / "down") / "b.txt").read_text() == "hello"
    snap = sb.snapshot()
    sb.exec("rm /app/a/b.txt; echo new > /app/new.txt; echo x > /tests/u.txt")
    sb.restore(snap)
    assert sb.read_file("/app/a/b.txt") == b"hello"
    assert sb.read_file("/tests/u.txt") == b"u"
    assert sb.exec("test -e /app/new.txt").exit_code == 1
    with pytest.raises(SandboxError):
        sb.restore("unknown")
