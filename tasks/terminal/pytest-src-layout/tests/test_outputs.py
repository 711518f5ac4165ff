import hashlib
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

SRC = Path("/app/textkit")
ORIGINAL_TESTS = {
    "test_slug.py": "from textkit import slugify",
    "test_wrap.py": "from textkit import wrap",
}


def run_pytest(cwd):
    return subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"], cwd=cwd,
                          capture_output=True, text=True, timeout=60, env={"PATH": "/usr/bin:/bin", "HOME": "/tmp"})


def test_visible_tests_unchanged():
    names = sorted(p.name for p in (SRC / "tests").iterdir() if p.name != "__pycache__")
    assert names == ["test_slug.py", "test_wrap.py"]
    assert "assert slugify(\"Crème Brûlée\") == \"creme-brulee\"" in (SRC / "tests/test_slug.py").read_text()
    assert "assert wrap(\"aaaa bbbb\", 9) == \"aaaa bbbb\"" in (SRC / "tests/test_wrap.py").read_text()


def test_package_not_copied():
    assert (SRC / "src/textkit/slug.py").is_file()
    for extra in (SRC / "textkit", SRC / "tests/textkit"):
        assert not extra.exists()


def test_visible_suite_passes():
    r = run_pytest(SRC)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "5 passed" in r.stdout


def test_hidden_suite_passes(tmp_path):
    dest = tmp_path / "textkit"
    shutil.copytree(SRC, dest, ignore=shutil.ignore_patterns("__pycache__", ".pytest_cache"))
    shutil.copy("/tests/hidden/test_hidden_textkit.py", dest / "tests" / "test_hidden_textkit.py")
    r = run_pytest(dest)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "23 passed" in r.stdout, r.stdout
