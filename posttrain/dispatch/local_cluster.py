"""A Ray cluster of several nodes on one machine (tests, benchmarks/scale_out.py): each node a
`ray start --block` process in a session of its own, every port chosen free, one temp dir per
cluster. `RayNode(temp)` starts a head (`start_head(temp)`: one whose GCS is seen listening);
`RayNode(temp, head=PORT, resources={...})` a worker node that joins it. `kill()` loses a node
the way a crashed machine does (SIGKILL to its whole process group: raylet, workers and all);
`stop()` lets `ray start` stop what it started, then kills whatever of its session is left."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

RAY = Path(sys.executable).with_name("ray")
ROOT = Path(__file__).resolve().parents[2]  # put on the nodes' import path: their workers import posttrain

# a lost node is noticed in about 2 s instead of Ray's default 15 s or more (set on the head)
FAST_HEALTH_CHECK = {
    "RAY_health_check_initial_delay_ms": "1000",
    "RAY_health_check_period_ms": "500",
    "RAY_health_check_timeout_ms": "500",
    "RAY_health_check_failure_threshold": "3",
}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def listening(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=1.0):
            return True
    except OSError:
        return False


def start_head(temp: Path, attempts: int = 3, timeout: float = 60.0, **kwargs) -> RayNode:
    """A head node whose GCS accepts connections. A head that exits, or whose GCS is not
    listening within `timeout` s, is stopped and started again on fresh ports: a driver's
    `ray.init` against a GCS that never comes up does not fail fast but retries for ~14 min
    (20 tries of ~40 s; seen once in a CI run on a loaded machine)."""
    for attempt in range(1, attempts + 1):
        head = RayNode(temp, **kwargs)
        deadline = time.monotonic() + timeout
        while head.alive() and time.monotonic() < deadline:
            if listening(head.port):
                return head
            time.sleep(0.3)
        code = head.process.poll()
        head.stop()
        state = f"exited with code {code}" if code is not None else f"not listening after {timeout:.0f} s"
        print(f"ray head (attempt {attempt} of {attempts}): its GCS {state}; starting it again", file=sys.stderr)
    raise RuntimeError(f"the Ray head did not come up in {attempts} attempts of {timeout:.0f} s (temp dir {temp})")


class RayNode:
    def __init__(
        self,
        temp: Path,
        head: int | None = None,
        resources: dict[str, float] | None = None,
        env: dict[str, str] | None = None,
        **flags,
    ) -> None:
        """`head`: the GCS port of the head to join (none: start a head); `flags`: more `ray
        start` options, e.g. dashboard_port=8265 -> --dashboard-port=8265."""
        env = {
            **os.environ,
            "RAY_USAGE_STATS_ENABLED": "0",
            "RAY_AUTH_MODE": "disabled",  # a token another cluster left in ~/.ray would otherwise switch it on
            "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",  # the jobs' `python`
            "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]).rstrip(os.pathsep),
            "OMP_NUM_THREADS": "1",
            **(env or {}),
        }
        ports = {
            "node_manager_port": free_port(),
            "object_manager_port": free_port(),
            "dashboard_agent_listen_port": free_port(),
            "dashboard_agent_grpc_port": free_port(),
            "metrics_export_port": free_port(),
            "runtime_env_agent_port": free_port(),
        }
        if head is None:
            self.port = free_port()
            ports.update(port=self.port, ray_client_server_port=free_port())
            args = [str(RAY), "start", "--head"]
        else:
            self.port = head
            args = [str(RAY), "start", f"--address=127.0.0.1:{head}"]
        args += ["--block", f"--temp-dir={temp}", "--disable-usage-stats"]
        if resources:
            args.append(f"--resources={json.dumps(resources)}")
        args += [f"--{key.replace('_', '-')}={value}" for key, value in {**ports, **flags}.items()]
        self.process = subprocess.Popen(
            args, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True
        )

    def alive(self) -> bool:
        return self.process.poll() is None

    def kill(self) -> None:
        """The node is lost at once: nothing of it gets to say goodbye. Ray's worker processes
        put themselves in process groups of their own, so they are found as descendants."""
        doomed = _descendants(self.process.pid)
        try:
            os.killpg(self.process.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        for pid in doomed:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        self.process.wait()

    def stop(self) -> None:
        if self.alive():
            self.process.terminate()  # ray start --block stops the processes it started
            try:
                self.process.wait(timeout=60)
            except subprocess.TimeoutExpired:
                pass
        self.kill()


def _descendants(pid: int) -> list[int]:
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                ppid = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue  # gone meanwhile
            children.setdefault(ppid, []).append(int(entry.name))
    found, todo = [], [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            found.append(child)
            todo.append(child)
    return found
