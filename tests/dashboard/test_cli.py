"""`posttrain dashboard` as a user runs it: it serves the directories given on the command line,
and a port in use is one error line naming it."""

import json
import os
import socket
import subprocess
import sys
import time
from pathlib import Path
from urllib.request import urlopen

ROOT = Path(__file__).resolve().parents[2]


def dashboard(*args) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-m", "posttrain.cli", "dashboard", *map(str, args)],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "COLUMNS": "200"},
    )


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_the_command_serves_the_directories_it_was_given(directories):
    port = free_port()
    served = dashboard(directories["eval"], directories["inspect"], "--port", port)
    try:
        deadline, listed = time.monotonic() + 60, None
        while listed is None and time.monotonic() < deadline and served.poll() is None:
            try:
                listed = json.loads(urlopen(f"http://127.0.0.1:{port}/api/directories", timeout=2).read())
            except OSError:
                time.sleep(0.2)
        assert listed is not None, served.stderr.read() if served.poll() is not None else "no answer"
        assert [(d["kind"], d["path"]) for d in listed] == [
            ("eval", str(directories["eval"])),
            ("inspect", str(directories["inspect"])),
        ]
    finally:
        served.terminate()
        served.wait(timeout=30)


def test_a_port_in_use_is_one_error_line(directories):
    with socket.create_server(("127.0.0.1", 0)) as taken:
        port = taken.getsockname()[1]
        refused = dashboard(directories["eval"], "--port", port)
        _, err = refused.communicate(timeout=60)
    assert refused.returncode == 2
    assert err.strip().startswith(f"error: posttrain dashboard --port: cannot listen on 127.0.0.1:{port} (")
    assert "choose another port" in err
    assert len(err.strip().splitlines()) == 1
