import asyncio
import statistics
import time

import pytest

from posttrain.sandbox.interface import SandboxError, SandboxLimits, SandboxSpec


def test_exec_basics(make_sandbox):
    sandbox = make_sandbox()
    result = sandbox.exec("echo out; echo err >&2; exit 3")
    assert (result.exit_code, result.stdout, result.stderr) == (3, "out\n", "err\n")
    assert not result.timed_out and not result.oom_killed and not result.ok
    assert sandbox.exec(["printf", "%s|", "a b", "c"]).stdout == "a b|c|"
    assert sandbox.exec("cat", stdin="piped").stdout == "piped"
    assert sandbox.exec("echo $FOO", env={"FOO": "bar"}).stdout == "bar\n"
    assert sandbox.exec("pwd", workdir="/tmp").stdout == "/tmp\n"
    assert sandbox.exec("pwd").stdout == "/app\n"
    assert sandbox.exec("hostname; whoami").stdout == "sandbox\nroot\n"


def test_state_persists_between_commands_and_tmp_and_root_are_private(make_sandbox):
    a, b = make_sandbox(), make_sandbox()
    a.exec("echo 1 > /app/f; echo 2 > /tmp/g; echo 'alias x=y' >> /root/.bashrc")
    assert a.exec("cat /app/f /tmp/g").stdout == "1\n2\n"
    assert b.exec("ls -A /app /tmp /root").stdout.split() == ["/app:", "/root:", "/tmp:"]


def test_output_is_bounded_and_flagged(make_sandbox):
    sandbox = make_sandbox(output_bytes=4096)
    result = sandbox.exec("head -c 10000000 /dev/zero | tr '\\0' x; echo done >&2")
    assert len(result.stdout) == 4096 and result.stdout_truncated
    assert result.stderr == "done\n" and not result.stderr_truncated


def test_files_round_trip(make_sandbox, tmp_path):
    sandbox = make_sandbox()
    sandbox.write_file("/app/dir/x.bin", bytes(range(256)), mode=0o755)
    assert sandbox.read_file("/app/dir/x.bin") == bytes(range(256))
    assert sandbox.exec("stat -c %a /app/dir/x.bin").stdout.strip() == "755"
    with pytest.raises(FileNotFoundError, match="/app/missing"):
        sandbox.read_file("/app/missing")
    src = tmp_path / "src"
    (src / "sub").mkdir(parents=True)
    (src / "sub" / "a.txt").write_text("A")
    (src / "b.txt").write_text("B")
    sandbox.upload(src, "/app/project")
    assert sandbox.exec("cat /app/project/sub/a.txt /app/project/b.txt").stdout == "AB"
    out = sandbox.download("/app/project", tmp_path / "back")
    assert (out / "sub" / "a.txt").read_text() == "A"


def test_snapshot_restore_is_exact_and_layered(make_sandbox):
    sandbox = make_sandbox()
    sandbox.exec("mkdir -p /app/d && echo v1 > /app/d/f && echo keep > /app/k")
    first = sandbox.snapshot()
    sandbox.exec("echo v2 > /app/d/f && rm /app/k && echo new > /app/n && rm -rf /app/d")
    second = sandbox.snapshot()
    sandbox.exec("echo v3 > /app/n")
    sandbox.restore(second)
    assert sandbox.exec("ls /app; cat /app/n").stdout == "n\nnew\n"
    sandbox.restore(first)
    assert sandbox.exec("ls /app; cat /app/d/f /app/k").stdout == "d\nk\nv1\nkeep\n"
    with pytest.raises(SandboxError, match="unknown snapshot"):
        sandbox.restore(second)  # dropped by restoring an older one


def _snapshot_restore_seconds(sandbox) -> float:
    base = sandbox.snapshot()
    times = []
    for _ in range(10):
        started = time.perf_counter()
        sandbox.snapshot()
        sandbox.restore(base)
        times.append(time.perf_counter() - started)
    return statistics.median(times)


def test_snapshot_time_does_not_grow_with_workspace_size(make_sandbox):
    small, big = make_sandbox(), make_sandbox(disk_mb=300)
    small.exec("echo small > /app/file")
    big.exec("head -c 200M /dev/zero > /app/big", timeout=120)
    # side by side, interleaved: a copy of 200 MB would take ~100x a rename of the layer
    small_s, big_s = zip(*[(_snapshot_restore_seconds(small), _snapshot_restore_seconds(big)) for _ in range(3)])
    assert min(big_s) < 10 * max(min(small_s), 0.0005), (small_s, big_s)
    assert big.exec("stat -c %s /app/big").stdout.strip() == str(200 << 20)


def test_shared_layers_are_read_only_for_each_sandbox(make_sandbox, sandbox_base, tmp_path):
    from posttrain.sandbox.bwrap_backend import BwrapSandbox

    layer = tmp_path / "layer"
    (layer / "app").mkdir(parents=True)
    (layer / "app" / "shared.txt").write_text("base")
    one = BwrapSandbox(SandboxSpec(layers=[layer]), base_dir=sandbox_base)
    two = BwrapSandbox(SandboxSpec(layers=[layer]), base_dir=sandbox_base)
    try:
        one.exec("echo changed > /app/shared.txt")
        assert one.read_file("/app/shared.txt") == b"changed\n"
        assert two.read_file("/app/shared.txt") == b"base"
        assert (layer / "app" / "shared.txt").read_text() == "base"
    finally:
        one.close()
        two.close()


def test_network_when_allowed(make_sandbox):
    sandbox = make_sandbox(allow_network=True)
    result = sandbox.exec("cat /proc/net/dev | grep -c ':'")
    assert int(result.stdout) > 1  # the host's interfaces, not just loopback


def test_async_variants(make_sandbox):
    sandbox = make_sandbox()

    async def go():
        await sandbox.awrite_file("/app/x", "async")
        results = await asyncio.gather(*(sandbox.aexec(f"echo {i}") for i in range(4)))
        snap = await sandbox.asnapshot()
        await sandbox.arestore(snap)
        return [r.stdout for r in results], await sandbox.aread_file("/app/x")

    outputs, content = asyncio.run(go())
    assert sorted(outputs) == ["0\n", "1\n", "2\n", "3\n"] and content == b"async"


def test_bad_layer_and_closed_sandbox_errors(make_sandbox, sandbox_base, tmp_path):
    from posttrain.sandbox.bwrap_backend import BwrapSandbox

    with pytest.raises(SandboxError, match="is not a directory"):
        BwrapSandbox(SandboxSpec(layers=[tmp_path / "nope"]), base_dir=sandbox_base)
    sandbox = make_sandbox()
    sandbox.close()
    with pytest.raises(SandboxError, match="is closed"):
        sandbox.exec("true")


def test_bad_limit_values_are_rejected():
    with pytest.raises(ValueError, match="memory_mb"):
        SandboxLimits(memory_mb=1)
    with pytest.raises(ValueError, match="cpus"):
        SandboxLimits(cpus=0)


def test_a_sandbox_that_cannot_start_is_a_clear_error(make_sandbox):
    sandbox = make_sandbox()
    sandbox.spec.workdir = "/no/such/dir"  # bwrap cannot chdir there: it fails before the command
    with pytest.raises(SandboxError, match="failed to start: bwrap: Can't chdir"):
        sandbox.exec("true")


def test_missing_bubblewrap_says_what_to_do(make_sandbox, monkeypatch, sandbox_base):
    from posttrain.sandbox.bwrap_backend import BwrapSandbox

    monkeypatch.setenv("PATH", "/nonexistent")
    with pytest.raises(SandboxError, match="bubblewrap is not installed: run `make setup` as root"):
        BwrapSandbox(base_dir=sandbox_base)


def test_a_chosen_root_filesystem_replaces_the_host_view(make_sandbox, sandbox_base, tmp_path):
    import subprocess

    from posttrain.sandbox.bwrap_backend import BwrapSandbox

    rootfs = tmp_path / "rootfs"
    for name in ("usr", "app", "tmp", "tests", "logs", "root", "proc", "dev", "etc"):
        (rootfs / name).mkdir(parents=True)
    for name in ("bin", "lib", "lib64", "sbin"):
        (rootfs / name).symlink_to(f"usr/{name}")
    (rootfs / "etc" / "marker").write_text("from the chosen rootfs\n")
    subprocess.run(["mount", "--bind", "/usr", str(rootfs / "usr")], check=True)
    try:
        sandbox = BwrapSandbox(SandboxSpec(rootfs=rootfs), base_dir=sandbox_base)
        try:
            result = sandbox.exec("cat /etc/marker; test -e /etc/passwd && echo host-etc; echo hi > /app/x; cat /app/x")
            assert result.stdout == "from the chosen rootfs\nhi\n"
        finally:
            sandbox.close()
    finally:
        subprocess.run(["umount", str(rootfs / "usr")], check=True)
