import subprocess
from pathlib import Path


def git(*args):
    return subprocess.run(["git", "-C", "/app", *args], capture_output=True, text=True, check=True).stdout.strip()


SETTINGS = """[server]
host = 0.0.0.0
port = 8080
timeout = 45

[client]
retries = 5
backoff = 2.0

[metrics]
enabled = true

[tracing]
enabled = false
"""

CHANGELOG = """# Changelog

## Unreleased (metrics)
- Export Prometheus metrics

## Unreleased (retry)
- Retry failed requests with backoff

## 0.1.0
- First release
"""


def test_merge_commit_parents():
    assert git("symbolic-ref", "HEAD") == "refs/heads/main"
    parents = git("log", "-1", "--format=%P", "main").split()
    assert len(parents) == 2
    assert git("log", "-1", "--format=%s", parents[0]) == "Document metrics; client timeout"
    assert parents[1] == git("rev-parse", "feature/retry")
    assert git("log", "-1", "--format=%s", "feature/retry") == "Add retry helper"
    assert git("log", "-1", "--format=%B", "main").strip() == "Merge branch 'feature/retry'"


def test_resolved_contents():
    assert git("show", "main:config/settings.ini") + "\n" == SETTINGS
    assert git("show", "main:CHANGELOG.md") + "\n" == CHANGELOG
    assert git("show", "main:src/client.py") == "def fetch(url, timeout=45):\n    return url"
    assert "def retry(fn, attempts=5, backoff=2.0):" in git("show", "main:src/retry.py")


def test_worktree_clean():
    assert git("status", "--porcelain") == ""
    assert Path("/app/config/settings.ini").read_text() == SETTINGS
    assert not Path("/app/.git/MERGE_HEAD").exists()
