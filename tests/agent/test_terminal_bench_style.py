"""A task shaped like a public Terminal-Bench 2 task (a Python image, apt and pip packages in
the Dockerfile, a file COPYed into /usr/local/bin) loads and runs unchanged under the oracle.
The build downloads from Debian and PyPI, so the test needs those mirrors."""

import socket

import pytest

from posttrain.agent.loop import run_episodes
from posttrain.agent.policies import NopPolicy, OraclePolicy
from posttrain.tasks.harbor import load_harbor_task


def _reachable(host: str, port: int) -> bool:
    try:
        socket.create_connection((host, port), timeout=5).close()
        return True
    except OSError:
        return False


DOCKERFILE = """FROM python:3.11-slim-bookworm
ENV DEBIAN_FRONTEND=noninteractive
RUN apt-get update && apt-get install -y --no-install-recommends tree && rm -rf /var/lib/apt/lists/*
RUN pip install --no-cache-dir tomli-w==1.0.0
COPY describe.sh /usr/local/bin/describe
RUN chmod +x /usr/local/bin/describe
WORKDIR /app
COPY data/ /app/data/
"""

TEST = """#!/bin/bash
mkdir -p /logs/verifier
python3 - <<'PY'
import tomllib, sys
try:
    with open("/app/tree.toml", "rb") as handle:
        data = tomllib.load(handle)
    ok = data.get("files") == ["a.txt", "b.txt"] and data.get("tool") == "tree"
except Exception as exc:
    print(exc); ok = False
open("/logs/verifier/reward.txt", "w").write("1" if ok else "0")
PY
"""

SOLVE = """#!/bin/bash
set -e
describe /app/data > /tmp/listing.txt
python3 -c '
import tomli_w
names = sorted(l.split()[-1] for l in open("/tmp/listing.txt") if l.strip().endswith(".txt"))
open("/app/tree.toml", "w").write(tomli_w.dumps({"files": names, "tool": "tree"}))
'
"""


@pytest.mark.skipif(
    not (_reachable("deb.debian.org", 80) and _reachable("pypi.org", 443)),
    reason="needs the Debian and PyPI mirrors to build the environment",
)
@pytest.mark.timeout(600)
def test_a_task_with_apt_and_pip_packages_runs_unchanged(tmp_path, tokenizer, needs_bwrap):
    root = tmp_path / "tb-style"
    (root / "environment" / "data").mkdir(parents=True)
    (root / "environment" / "Dockerfile").write_text(DOCKERFILE)
    (root / "environment" / "describe.sh").write_text('#!/bin/sh\nexec tree -i --noreport "$1"\n')
    (root / "environment" / "data" / "a.txt").write_text("a")
    (root / "environment" / "data" / "b.txt").write_text("b")
    (root / "tests").mkdir()
    (root / "tests" / "test.sh").write_text(TEST)
    (root / "solution").mkdir()
    (root / "solution" / "solve.sh").write_text(SOLVE)
    (root / "task.toml").write_text(
        'version = "1.0"\n[metadata]\ncategory = "demo"\n[verifier]\ntimeout_sec = 60.0\n'
        "[agent]\ntimeout_sec = 120.0\n[environment]\nbuild_timeout_sec = 300.0\n"
    )
    (root / "instruction.md").write_text("List /app/data with the describe tool into /app/tree.toml.")
    task = load_harbor_task(root)
    oracle, nop = (
        run_episodes([task, task], OraclePolicy(), tokenizer)[0],
        run_episodes([task], NopPolicy(), tokenizer)[0],
    )
    assert oracle.reward.passed, (oracle.error, oracle.tool_calls[0].observation if oracle.tool_calls else None)
    assert not nop.reward.passed
