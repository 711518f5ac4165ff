import subprocess


def git(*args):
    return subprocess.run(["git", "-C", "/app", *args], capture_output=True, text=True, check=True).stdout.strip()


def test_on_feature_branch():
    assert git("symbolic-ref", "HEAD") == "refs/heads/feature/login"


def test_branch_points_at_main():
    assert git("rev-parse", "feature/login") == git("rev-parse", "main")


def test_no_new_commits():
    assert git("rev-list", "--count", "main") == "3"
    assert git("log", "-1", "--format=%s", "main") == "Add settings"
