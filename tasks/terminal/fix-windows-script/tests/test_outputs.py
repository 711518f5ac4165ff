import json
import os
import shutil
import subprocess
from pathlib import Path

SERVICES = Path("/app/scripts/services.txt")
ORIG = [{"name": "web", "port": 8080, "replicas": 3}, {"name": "api", "port": 9000, "replicas": 1},
        {"name": "worker", "port": 7000, "replicas": 2}, {"name": "metrics", "port": 9100, "replicas": 1}]


def run_script():
    out = Path("/app/out/config.json")
    if out.exists():
        out.unlink()
    return subprocess.run(["/app/scripts/setup.sh"], cwd="/", capture_output=True, text=True, timeout=20)


def test_runs_on_current_file():
    r = run_script()
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "wrote 4 services"
    assert json.loads(Path("/app/out/config.json").read_text()) == {"services": ORIG}


def test_handles_crlf_input(tmp_path):
    backup = tmp_path / "services.txt"
    shutil.copy(SERVICES, backup)
    try:
        SERVICES.write_bytes(b"# regenerated\r\ncache 6379 2\r\n\r\nsearch 9200\r\nq 5672 10\r\n")
        r = run_script()
        assert r.returncode == 0, r.stderr
        assert r.stdout.strip() == "wrote 3 services"
        assert json.loads(Path("/app/out/config.json").read_text()) == {"services": [
            {"name": "cache", "port": 6379, "replicas": 2}, {"name": "search", "port": 9200, "replicas": 1},
            {"name": "q", "port": 5672, "replicas": 10}]}
        SERVICES.write_bytes(b"solo 1234\n")
        r = run_script()
        assert r.returncode == 0, r.stderr
        assert json.loads(Path("/app/out/config.json").read_text()) == {
            "services": [{"name": "solo", "port": 1234, "replicas": 1}]}
    finally:
        shutil.copy(backup, SERVICES)
    run_script()


def test_script_file_is_clean():
    data = Path("/app/scripts/setup.sh").read_bytes()
    assert b"\r" not in data.split(b"\n", 1)[0]
    assert os.access("/app/scripts/setup.sh", os.X_OK)
