"""The escape and abuse suite: each case asserts that the host is untouched."""

import os
import subprocess
import time
import uuid
from pathlib import Path

PROJECT = Path(__file__).resolve().parents[2]


def host_processes_matching(marker: str) -> list[str]:
    out = subprocess.run(["pgrep", "-af", marker], capture_output=True, text=True).stdout
    return [line for line in out.splitlines() if "pgrep" not in line]


def test_fork_bomb_is_stopped_by_the_pids_limit(make_sandbox):
    sandbox = make_sandbox(pids=32, memory_mb=256)
    marker = f"bomb{uuid.uuid4().hex[:6]}"
    # bash backs off and retries a failed fork, which takes long on a loaded machine: the limit
    # under test is the pids cap, not speed
    result = sandbox.exec(f"{marker}() {{ {marker} | {marker} & }}; {marker}; sleep 2; echo survived", timeout=90)
    assert not result.timed_out
    assert "fork" in result.stderr.lower() or "resource temporarily unavailable" in result.stderr.lower()
    assert sandbox.cgroup.pids() == []
    assert host_processes_matching(marker) == []


def test_memory_bomb_is_oom_killed_and_reported(make_sandbox):
    sandbox = make_sandbox(memory_mb=64)
    result = sandbox.exec("python3 -c \"x = bytearray(512 * 1024 * 1024); print('allocated')\"", timeout=30)
    assert result.oom_killed
    assert result.exit_code == 137
    assert "allocated" not in result.stdout


def test_filling_the_disk_stops_at_the_quota(make_sandbox):
    sandbox = make_sandbox(disk_mb=16)
    free_before = os.statvfs("/tmp").f_bavail
    result = sandbox.exec("dd if=/dev/zero of=/app/fill bs=1M count=100; ls -l /app/fill", timeout=30)
    assert result.exit_code == 0  # ls ran; dd failed
    assert "No space left on device" in result.stderr
    size = int(result.stdout.split()[4])
    assert size <= 16 << 20
    assert os.statvfs("/tmp").f_bavail >= free_before - (32 << 20) // os.statvfs("/tmp").f_frsize


def test_network_egress_fails_without_permission(make_sandbox):
    sandbox = make_sandbox()
    result = sandbox.exec(
        "python3 -c \"import socket; s=socket.socket(); s.settimeout(2); s.connect(('127.0.0.1', 22))\"; "
        "ip -o link 2>/dev/null | grep -c -v ' lo:' || true; cat /proc/net/dev | grep -c ':' ",
        timeout=20,
    )
    assert "Network is unreachable" in result.stderr or "Connection refused" in result.stderr
    # only the loopback device exists in the sandbox's network namespace
    assert result.stdout.strip().splitlines()[-1] == "1"


def test_host_secrets_and_project_files_are_not_visible(make_sandbox, monkeypatch):
    monkeypatch.setenv("POSTTRAIN_HOST_SECRET", "s3cr3t-value")
    sandbox = make_sandbox()
    paths = ["/root/.bashrc", "/etc/shadow", "/etc/gshadow", "/home", str(PROJECT / "pyproject.toml"), "/work"]
    result = sandbox.exec(
        " ; ".join(f"cat {p} >/dev/null 2>&1 && echo LEAK:{p}" for p in paths)
        + "; env; cat /proc/*/environ 2>/dev/null | tr '\\0' '\\n'; true"
    )
    assert "LEAK" not in result.stdout, result.stdout
    assert "s3cr3t-value" not in result.stdout
    assert sandbox.exec("ls -A /root").stdout.strip() == ""


def test_writes_outside_the_workspace_do_not_reach_the_host(make_sandbox, tmp_path):
    sandbox = make_sandbox()
    target = tmp_path / "escape.txt"
    result = sandbox.exec(
        f"echo x > /usr/escape.txt; echo x > /etc/escape.txt; mkdir -p {tmp_path} && echo x > {target}; "
        "echo x > /escape.txt; echo done"
    )
    assert "done" in result.stdout
    assert not Path("/usr/escape.txt").exists() and not Path("/etc/escape.txt").exists()
    assert not target.exists() and not Path("/escape.txt").exists()
    assert "Read-only file system" in result.stderr


def test_host_processes_cannot_be_seen_or_signalled(make_sandbox):
    sleeper = subprocess.Popen(["sleep", "60"])
    try:
        sandbox = make_sandbox()
        result = sandbox.exec(f"cat /proc/[0-9]*/cmdline | tr '\\0' ' '; echo; kill -9 {sleeper.pid}; echo rc=$?")
        assert "sleep 60" not in result.stdout  # the host's processes are not in the sandbox's pid namespace
        assert "rc=1" in result.stdout
        time.sleep(0.1)
        assert sleeper.poll() is None
    finally:
        sleeper.kill()


def test_grandchild_outliving_the_timeout_is_killed(make_sandbox):
    sandbox = make_sandbox()
    marker = f"{uuid.uuid4().hex[:8]}"
    result = sandbox.exec(f"(setsid sleep 300{marker[:0]} &) ; exec -a sleeper-{marker} sleep 300", timeout=1)
    assert result.timed_out and result.exit_code == 124
    assert result.duration_s < 10
    assert sandbox.cgroup.pids() == []
    assert host_processes_matching(f"sleeper-{marker}") == []


def test_background_process_does_not_survive_its_command(make_sandbox):
    sandbox = make_sandbox()
    marker = uuid.uuid4().hex[:8]
    sandbox.exec(f"nohup bash -c 'exec -a bg-{marker} sleep 300' >/dev/null 2>&1 &")
    assert sandbox.cgroup.pids() == []
    assert host_processes_matching(f"bg-{marker}") == []


def test_close_leaves_no_process_mount_cgroup_or_directory(make_sandbox, sandbox_base):
    sandbox = make_sandbox(disk_mb=8)
    sandbox.exec("echo hi > /app/x")
    state, cgroups = sandbox.workspace.state_dir, list(sandbox.cgroup.dirs.values())
    sandbox.close()
    assert not state.exists()
    assert all(not d.exists() for d in cgroups)
    assert str(state) not in Path("/proc/self/mounts").read_text()


def test_sandboxes_of_a_killed_process_are_collected(sandbox_base, make_sandbox):
    import signal
    import sys

    from posttrain.sandbox.garbage import collect_garbage

    code = (
        "import os, sys, time; from pathlib import Path\n"
        "from posttrain.sandbox.bwrap_backend import BwrapSandbox\n"
        "from posttrain.sandbox.interface import SandboxSpec, SandboxLimits\n"
        f"s = BwrapSandbox(SandboxSpec(limits=SandboxLimits(disk_mb=8)), base_dir=Path({str(sandbox_base)!r}))\n"
        "s.exec('echo x > /app/x'); print(s.id, flush=True); time.sleep(60)\n"
    )
    proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    sandbox_id = proc.stdout.readline().strip()
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    state = sandbox_base / "sandboxes" / sandbox_id
    assert state.is_dir() and str(state) in Path("/proc/self/mounts").read_text()
    live = make_sandbox()  # a sandbox of a living process must survive collection
    assert sandbox_id in collect_garbage(sandbox_base)
    assert not state.exists() and str(state) not in Path("/proc/self/mounts").read_text()
    assert live.exec("echo ok").stdout == "ok\n"
