import subprocess
from pathlib import Path


def git(*args):
    return subprocess.run(["git", "-C", "/app", *args], capture_output=True, text=True, check=True).stdout.strip()


def fix_hash():
    hashes = git("log", "--format=%H", "--grep=^Fix path traversal", "release/1.x").split()
    assert len(hashes) == 1
    return hashes[0]


def test_release_branch_untouched():
    assert git("log", "--format=%s", "release/1.x").splitlines() == [
        "Release 1.4.2", "Fix path traversal in static file handler", "1.x: shorter cache lifetime",
        "Static file handler"]


def test_cherry_pick_commit():
    assert git("symbolic-ref", "HEAD") == "refs/heads/main"
    assert git("rev-list", "--count", "main") == "4"
    assert git("log", "-1", "--format=%s", "main~1") == "Add README"
    msg = git("log", "-1", "--format=%B", "main")
    assert msg == ("Fix path traversal in static file handler\n\nRequests such as /../../etc/passwd escaped ROOT.\n\n"
                   f"(cherry picked from commit {fix_hash()})")
    assert git("diff", "--name-only", "main~1", "main") == "static_handler.py"


def test_content():
    assert git("show", "main:static_handler.py") == git("show", f"{fix_hash()}:static_handler.py")
    assert git("show", "main:cache.py") == "MAX_AGE = 7200\nSTALE_OK = True"
    assert not Path("/app/VERSION").exists()
    assert git("status", "--porcelain") == ""
