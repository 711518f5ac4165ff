"""The `local` backend, for real: subprocesses in a temp dir (no mocks)."""

from __future__ import annotations

import asyncio
import os
import random
import subprocess
import sys
import time
import warnings
from pathlib import Path

import pytest

from posttrain.sandbox import local_backend
from posttrain.sandbox.interface import SandboxError, SandboxLimits, SandboxSpec
from posttrain.sandbox.local_backend import LocalSandbox

pytestmark = pytest.mark.filterwarnings("ignore:the local sandbox backend does not isolate:RuntimeWarning")


@pytest.fixture
def sb():
    sandbox = LocalSandbox()
    yield sandbox
    sandbox.close()


def _procs_matching(pattern: str) -> list[str]:
    found = subprocess.run(["pgrep", "-f", pattern], capture_output=True, text=True)
    return found.stdout.split()


def _wait_gone(pattern: str, within: float = 2.0) -> list[str]:
    deadline = time.monotonic() + within
    while (left := _procs_matching(pattern)) and time.monotonic() < deadline:
        time.sleep(0.05)
    return left


def test_warns_once_per_process():
    local_backend._warned = False
    with pytest.warns(RuntimeWarning, match="does not isolate"):
        LocalSandbox().close()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        LocalSandbox().close()  # a second sandbox does not warn again


def test_exec_string_runs_under_a_shell(sb):
    r = sb.exec("echo out; echo err >&2; exit 3")
    assert (r.exit_code, r.stdout, r.stderr) == (3, "out\n", "err\n")
    assert not r.ok and not r.timed_out and not r.oom_killed
    assert r.duration_s > 0
    ok = sb.exec("x=2; echo $((x * 21)) | tr 4 f")
    assert ok.ok and ok.stdout == "f2\n"


def test_exec_list_runs_directly_without_word_splitting(sb):
    r = sb.exec(["printf", "%s|", "a b", "$HOME", "c"])
    assert r.exit_code == 0
    assert r.stdout == "a b|$HOME|c|"


def test_exec_missing_program_and_signals(sb):
    missing = sb.exec(["no-such-program-posttrain"])
    assert missing.exit_code == 127 and "no-such-program-posttrain" in missing.stderr
    assert sb.exec("exit 42").exit_code == 42
    killed = sb.exec("kill -9 $$")
    assert killed.exit_code == 137 and not killed.timed_out
    with pytest.raises(SandboxError):
        sb.exec([])


def test_stdin_str_and_bytes(sb):
    assert sb.exec("tr a-z A-Z", stdin="hello\n").stdout == "HELLO\n"
    assert sb.exec(["wc", "-c"], stdin=b"\x00\x01\x02").stdout.strip() == "3"
    big = "x" * 300_000  # more than a pipe buffer: stdin and stdout flow together
    assert len(sb.exec(["cat"], stdin=big).stdout) == 300_000
    assert sb.exec("cat").stdout == ""  # no stdin: /dev/null, not the test runner's


def test_env_is_minimal_and_layered(monkeypatch):
    monkeypatch.setenv("POSTTRAIN_HOST_SECRET", "leak")
    with LocalSandbox(SandboxSpec(env={"A": "spec", "B": "spec"})) as sb:
        r = sb.exec('echo "$A $B $C ${POSTTRAIN_HOST_SECRET:-none}"', env={"B": "call", "C": "call"})
        assert r.stdout == "spec call call none\n"
        paths = sb.exec('echo "$APP_DIR|$SANDBOX_ROOT|$HOME|$TMPDIR"').stdout.strip().split("|")
        assert paths == [str(sb.root / "app"), str(sb.root), str(sb.root / "app"), str(sb.root / "tmp")]
        assert sb.exec("echo $PATH").stdout.strip()


def test_workdir_default_and_explicit(sb):
    assert Path(sb.exec("pwd -P").stdout.strip()) == (sb.root / "app").resolve()
    assert Path(sb.exec("pwd -P", workdir="/tests").stdout.strip()) == (sb.root / "tests").resolve()
    sb.write_file("/app/sub/dir/f.txt", "here")
    assert sb.exec(["cat", "f.txt"], workdir="/app/sub/dir").stdout == "here"
    with pytest.raises(SandboxError):
        sb.exec("pwd", workdir="/app/missing")
    with pytest.raises(SandboxError):
        sb.exec("pwd", workdir="/etc")


def test_timeout_kills_the_whole_tree(sb):
    marker = f"29.{random.randrange(10**8, 10**9)}"  # a unique `sleep` argument to look for
    started = time.monotonic()
    r = sb.exec(f"(sleep {marker} &) ; sleep {marker}", timeout=1)
    assert time.monotonic() - started < 5
    assert r.timed_out and r.exit_code == 124 and not r.ok
    assert 1.0 <= r.duration_s < 5
    assert _wait_gone(f"sleep {marker}") == []


def test_default_timeout_comes_from_the_spec():
    with LocalSandbox(SandboxSpec(limits=SandboxLimits(timeout_s=0.5))) as sb:
        r = sb.exec("sleep 20")
        assert r.timed_out and r.exit_code == 124 and r.duration_s < 3


def test_what_a_command_leaves_running_is_killed_when_it_returns(sb):
    marker = f"28.{random.randrange(10**8, 10**9)}"
    started = time.monotonic()
    r = sb.exec(f"sleep {marker} & echo started")
    assert r.ok and r.stdout == "started\n"
    assert time.monotonic() - started < 3
    assert _wait_gone(f"sleep {marker}") == []


def test_output_is_cut_with_flags():
    limits = SandboxLimits(output_bytes=1024)
    with LocalSandbox(SandboxSpec(limits=limits)) as sb:
        r = sb.exec("head -c 5000 /dev/zero | tr '\\0' a; head -c 100 /dev/zero | tr '\\0' b >&2")
        assert r.ok
        assert r.stdout == "a" * 1024 and r.stdout_truncated
        assert r.stderr == "b" * 100 and not r.stderr_truncated
        exact = sb.exec("head -c 1024 /dev/zero | tr '\\0' c >&2")
        assert len(exact.stderr) == 1024 and not exact.stderr_truncated
        flood = sb.exec("head -c 20000000 /dev/zero")  # drained, not kept
        assert flood.ok and len(flood.stdout) == 1024 and flood.stdout_truncated
        bad = sb.exec(["printf", "\\377ok"])
        assert bad.stdout == "\ufffdok"


def test_memory_limit_is_an_address_space_rlimit():
    with LocalSandbox(SandboxSpec(limits=SandboxLimits(memory_mb=256))) as sb:
        r = sb.exec([sys.executable, "-c", "b = bytearray(1024 * 1024 * 1024)"])
        assert r.exit_code != 0 and "MemoryError" in r.stderr
        assert sb.exec([sys.executable, "-c", "b = bytearray(16 * 1024 * 1024)"]).ok
        assert sb.exec("ulimit -n").stdout.strip() == str(SandboxLimits().open_files)


def test_read_write_round_trip(sb):
    sb.write_file("/app/deep/er/hello.txt", "héllo")
    assert sb.read_file("/app/deep/er/hello.txt") == "héllo".encode()
    sb.write_file("/tmp/blob.bin", bytes(range(256)), mode=0o600)
    assert sb.read_file("/tmp/blob.bin") == bytes(range(256))
    assert (os.stat(sb.host_path("/tmp/blob.bin")).st_mode & 0o777) == 0o600
    sb.write_file("/app/run.sh", "#!/bin/sh\necho ran\n", mode=0o755)
    assert sb.exec("./run.sh").stdout == "ran\n"
    sb.write_file("rel.txt", "relative to the workdir")
    assert sb.read_file("/app/rel.txt") == b"relative to the workdir"
    assert sb.exec("cat deep/er/hello.txt").stdout == "héllo"
    sb.exec('echo made-by-command > /dev/null; echo x > "$SANDBOX_ROOT/logs/out.txt"')
    assert sb.read_file("/logs/out.txt") == b"x\n"


def test_read_missing_and_paths_outside(sb):
    with pytest.raises(FileNotFoundError, match="/app/nope.txt"):
        sb.read_file("/app/nope.txt")
    with pytest.raises(IsADirectoryError):
        sb.read_file("/app")
    for outside in ("/etc/passwd", "/", "/app/../etc/passwd", "/root/x", "/application/x"):
        with pytest.raises(SandboxError, match="outside"):
            sb.read_file(outside)
    with pytest.raises(SandboxError):
        sb.write_file("/usr/bin/evil", "x")
    with pytest.raises(SandboxError):
        sb.write_file("/app", "x")


def test_upload_and_download(sb, tmp_path):
    src = tmp_path / "src"
    (src / "pkg").mkdir(parents=True)
    (src / "pkg" / "mod.py").write_text("print('hi')\n")
    (src / "top.txt").write_text("top")
    os.symlink("top.txt", src / "link")
    sb.upload(src, "/app/project")
    assert sb.exec("cat pkg/mod.py link", workdir="/app/project").stdout == "print('hi')\ntop"
    sb.upload(src, "/tests")  # into an existing root: contents merge in
    assert sb.read_file("/tests/top.txt") == b"top"

    out = sb.download("/app/project", tmp_path / "out")
    assert out == tmp_path / "out" / "project"
    assert (out / "pkg" / "mod.py").read_text() == "print('hi')\n"
    assert (out / "link").is_symlink() and (out / "link").read_text() == "top"
    one = sb.download("/app/project/top.txt", tmp_path / "one")
    assert one == tmp_path / "one" / "top.txt" and one.read_text() == "top"
    with pytest.raises(FileNotFoundError, match="/app/none"):
        sb.download("/app/none", tmp_path / "x")
    with pytest.raises(FileNotFoundError):
        sb.upload(tmp_path / "absent", "/app")
    with pytest.raises(SandboxError):
        sb.upload(src / "top.txt", "/app")


def test_layers_form_the_workspace_lowest_first(tmp_path):
    base, top = tmp_path / "base", tmp_path / "top"
    (base / "app").mkdir(parents=True)
    (base / "app" / "a.txt").write_text("base")
    (base / "app" / "keep.txt").write_text("kept")
    (base / "tests").mkdir()
    (base / "tests" / "test.sh").write_text("exit 0")
    (top / "app").mkdir(parents=True)
    (top / "app" / "a.txt").write_text("top")
    with LocalSandbox(SandboxSpec(layers=[base, top])) as sb:
        assert sb.read_file("/app/a.txt") == b"top"
        assert sb.read_file("/app/keep.txt") == b"kept"
        assert sb.exec('bash "$SANDBOX_ROOT/tests/test.sh"').ok
        sb.write_file("/app/a.txt", "changed")
    assert (top / "app" / "a.txt").read_text() == "top"  # layers are never written
    with pytest.raises(SandboxError, match="not a directory"):
        LocalSandbox(SandboxSpec(layers=[tmp_path / "missing"]))


def test_snapshot_restore(sb):
    sb.write_file("/app/deleted.txt", "d")
    sb.write_file("/app/modified.txt", "original")
    sb.write_file("/logs/log.txt", "log0")
    sb.write_file("/tmp/t.txt", "t0")
    snap = sb.snapshot()
    sb.exec(
        "rm deleted.txt; echo changed > modified.txt; echo new > new.txt; mkdir -p newdir/x; "
        'echo more >> "$SANDBOX_ROOT/logs/log.txt"; rm "$TMPDIR/t.txt"; echo n > "$SANDBOX_ROOT/tests/n"'
    )
    assert sb.read_file("/app/modified.txt") == b"changed\n"
    for _ in range(2):  # a snapshot can be restored more than once
        sb.restore(snap)
        assert sb.read_file("/app/deleted.txt") == b"d"
        assert sb.read_file("/app/modified.txt") == b"original"
        assert sb.read_file("/logs/log.txt") == b"log0"
        assert sb.read_file("/tmp/t.txt") == b"t0"
        listing = sb.exec('ls -A "$APP_DIR"; ls -A "$SANDBOX_ROOT/tests"').stdout.split()
        assert sorted(listing) == ["deleted.txt", "modified.txt"]
        sb.write_file("/app/new.txt", "again")
    second = sb.snapshot()
    assert second != snap
    sb.restore(second)
    assert sb.read_file("/app/new.txt") == b"again"
    with pytest.raises(SandboxError, match="no snapshot"):
        sb.restore("does-not-exist")
    with pytest.raises(SandboxError):
        sb.restore("../app")


def test_close_leaves_nothing_and_is_idempotent():
    sb = LocalSandbox()
    sb.write_file("/app/x", "x")
    sb.snapshot()
    root = sb.root
    assert root.is_dir()
    sb.close()
    sb.close()
    assert not root.exists()
    with pytest.raises(SandboxError, match="closed"):
        sb.exec("true")
    with pytest.raises(SandboxError, match="closed"):
        sb.read_file("/app/x")


def test_context_manager():
    with LocalSandbox(sandbox_id="ctx-test") as sb:
        assert sb.id == "ctx-test"
        assert sb.exec("echo in").stdout == "in\n"
        root = sb.root
    assert not root.exists()


def test_async_variants():
    async def main():
        async with LocalSandbox() as sb:
            await sb.awrite_file("/app/a.txt", "async")
            assert await sb.aread_file("/app/a.txt") == b"async"
            snap = await sb.asnapshot()
            results = await asyncio.gather(sb.aexec("cat a.txt"), sb.aexec(["sh", "-c", "rm a.txt"]))
            assert results[0].stdout in ("async", "")
            assert results[1].ok
            await sb.arestore(snap)
            r = await sb.aexec("cat a.txt", None, None, None, "/app")
            assert r.stdout == "async"
            timed = await sb.aexec("sleep 10", 0.3)
            assert timed.timed_out
            return sb.root

    root = asyncio.run(main())
    assert not root.exists()
