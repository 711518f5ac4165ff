import os
import subprocess
import tempfile
from pathlib import Path

REPO = "/app/stats-lib"


def git(*args):
    return subprocess.run(["git", "-C", REPO, *args], capture_output=True, text=True, check=True).stdout.strip()


def expected_first_bad():
    commits = git("rev-list", "--reverse", "main").split()
    assert len(commits) == 40
    with tempfile.TemporaryDirectory() as tmp:
        for c in commits:
            names = git("ls-tree", "--name-only", c).split()
            if "test_stats.py" not in names:
                continue
            for name in ("stats.py", "test_stats.py"):
                Path(tmp, name).write_text(git("show", f"{c}:{name}") + "\n")
            for cache in Path(tmp).glob("__pycache__"):
                subprocess.run(["rm", "-rf", str(cache)])
            rc = subprocess.run(["python3", "-B", "test_stats.py"], cwd=tmp, capture_output=True).returncode
            if rc == 1:
                return c
    raise AssertionError("no failing commit found: history was modified")


def test_answer_is_first_bad_commit():
    answer = Path("/app/first_bad_commit.txt").read_text().strip()
    want = expected_first_bad()
    assert git("log", "-1", "--format=%s", want) == "Simplify percentile index computation"
    assert answer == want


def test_repo_state_restored():
    assert git("symbolic-ref", "HEAD") == "refs/heads/main"
    assert git("rev-list", "--count", "main") == "40"
    assert git("log", "-1", "--format=%s", "main") == "Bump version to 1.4.0"
    assert not os.path.exists(os.path.join(REPO, ".git", "BISECT_START"))
    assert not os.path.exists(os.path.join(REPO, ".git", "BISECT_LOG"))
    assert git("status", "--porcelain", "--untracked-files=no") == ""
