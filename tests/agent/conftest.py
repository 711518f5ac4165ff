from pathlib import Path

import pytest

from tests.sandbox.conftest import BWRAP_MISSING

SUITE = Path(__file__).resolve().parents[2] / "tasks" / "terminal"


@pytest.fixture
def needs_bwrap():
    if BWRAP_MISSING:
        pytest.skip(BWRAP_MISSING)


@pytest.fixture
def good_file_task(tmp_path, needs_bwrap):
    """A task whose verifier passes when /app/good.txt says ok and /app/bad.txt does not exist."""
    from posttrain.tasks.harbor import load_harbor_task

    root = tmp_path / "good-file"
    (root / "environment").mkdir(parents=True)
    (root / "environment" / "Dockerfile").write_text("FROM debian:bookworm-slim\nWORKDIR /app\n")
    (root / "tests").mkdir()
    (root / "tests" / "test.sh").write_text(
        "mkdir -p /logs/verifier\n"
        'if [ "$(cat /app/good.txt 2>/dev/null)" = ok ] && [ ! -e /app/bad.txt ]; then echo 1; else echo 0; fi'
        " > /logs/verifier/reward.txt\n"
    )
    (root / "solution").mkdir()
    (root / "solution" / "solve.sh").write_text("echo ok > /app/good.txt\n")
    (root / "task.toml").write_text(
        'version = "1.0"\n[agent]\ntimeout_sec = 60.0\n[verifier]\ntimeout_sec = 30.0\n'
        "[environment]\nallow_internet = false\nmemory_mb = 512\n"
    )
    (root / "instruction.md").write_text("Write ok into /app/good.txt.")
    return load_harbor_task(root)
