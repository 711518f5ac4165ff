import subprocess
from pathlib import Path

CONTENT = """# Deploying

1. Build the image: `make image`.
2. Push it: `make push REGISTRY=registry.internal`.
3. Roll out: `kubectl rollout restart deploy/svc`.

Rollback: `kubectl rollout undo deploy/svc`.
"""


def git(*args):
    return subprocess.run(["git", "-C", "/app", *args], capture_output=True, text=True, check=True).stdout.strip()


def test_restore_commit():
    assert git("symbolic-ref", "HEAD") == "refs/heads/main"
    assert git("rev-list", "--count", "main") == "10"
    assert git("log", "-1", "--format=%B", "main").strip() == "Restore deployment guide"
    assert git("log", "-1", "--format=%s", "main~1") == "Service v3"
    assert git("diff", "--name-status", "main~1", "main") == "A\tdocs/DEPLOY.md"


def test_content_exact():
    assert git("show", "main:docs/DEPLOY.md") + "\n" == CONTENT
    assert Path("/app/docs/DEPLOY.md").read_text() == CONTENT


def test_history_untouched_and_clean():
    subjects = git("log", "--format=%s", "main~1").splitlines()
    assert subjects == ["Service v3", "Add ops notes", "Remove outdated docs", "Document rollback",
                        "README: point to docs", "Expand deployment guide", "Service v2 and notes",
                        "Add deployment guide", "Initial commit"]
    assert git("status", "--porcelain") == ""
    assert not Path("/app/docs/OLD.md").exists()
