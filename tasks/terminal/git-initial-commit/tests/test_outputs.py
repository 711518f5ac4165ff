import subprocess
from pathlib import Path

REPO = "/app/project"


def git(*args):
    return subprocess.run(["git", "-C", REPO, *args], capture_output=True, text=True, check=True).stdout.strip()


def test_is_repo_on_main():
    assert Path(REPO, ".git").is_dir()
    assert git("symbolic-ref", "HEAD") == "refs/heads/main"


def test_single_commit():
    assert git("rev-list", "--count", "HEAD") == "1"
    assert git("log", "-1", "--format=%B").strip() == "Initial commit"
    assert git("log", "-1", "--format=%ae")


def test_tracked_files_exact():
    files = sorted(git("ls-files").splitlines())
    assert files == sorted([".gitignore", "README.md", "docs/guide.md", "src/app.py", "src/util.py",
                            "tests/test_app.py"])


def test_clean_and_untouched():
    assert git("status", "--porcelain") == ""
    assert Path(REPO, ".env").read_text() == "SECRET_TOKEN=abc123\n"
    assert Path(REPO, "debug.log").is_file() and Path(REPO, "build/out.bin").is_file()
    assert Path(REPO, ".gitignore").read_text() == "*.log\nbuild/\n__pycache__/\n.env\n"
