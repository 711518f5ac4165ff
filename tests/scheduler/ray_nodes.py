"""A real Ray head on this machine for tests: a `ray start --head --block` process in a session
of its own, every port chosen free, its own temp dir. `stop()` lets `ray start` stop what it
started, then kills whatever of its session is left."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
from pathlib import Path

RAY = Path(sys.executable).with_name("ray")
ROOT = Path(__file__).resolve().parents[2]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class RayHead:
    def __init__(self, temp: Path, **flags) -> None:
        """`flags`: more `ray start` options, e.g. dashboard_port=8265 -> --dashboard-port=8265."""
        env = {
            **os.environ,
            "RAY_USAGE_STATS_ENABLED": "0",
            "RAY_AUTH_MODE": "disabled",  # a token another cluster left in ~/.ray would otherwise switch it on
            "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",  # the jobs' `python`
            "OMP_NUM_THREADS": "1",
        }
        ports = {
            "port": free_port(),
            "ray_client_server_port": free_port(),
            "dashboard_agent_listen_port": free_port(),
            "dashboard_agent_grpc_port": free_port(),
            "metrics_export_port": free_port(),
            "runtime_env_agent_port": free_port(),
        }
        args = [str(RAY), "start", "--head", "--block", f"--temp-dir={temp}", "--disable-usage-stats"]
        args += [f"--{key.replace('_', '-')}={value}" for key, value in {**ports, **flags}.items()]
        self.process = subprocess.Popen(
            args, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True
        )

    def alive(self) -> bool:
        return self.process.poll() is None

    def stop(self) -> None:
        if self.alive():
            self.process.terminate()  # ray start --block stops the processes it started
            try:
                self.process.wait(timeout=60)
            except subprocess.TimeoutExpired:
                pass
        try:
            os.killpg(self.process.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        self.process.wait()
