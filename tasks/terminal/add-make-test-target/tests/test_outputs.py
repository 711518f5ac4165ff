import os
import shutil
import subprocess
import time
from pathlib import Path

import pytest

SRC = Path("/app/stats-c")


def make(cwd, *targets):
    return subprocess.run(["make", *targets], cwd=cwd, capture_output=True, text=True, timeout=60)


@pytest.fixture()
def proj(tmp_path):
    dest = tmp_path / "stats-c"
    shutil.copytree(SRC, dest, symlinks=True)
    shutil.rmtree(dest / "build", ignore_errors=True)
    # the file named `test` is newer than anything make will build: a non-phony `test` target
    # would then be considered up to date
    later = time.time() + 86400
    os.utime(dest / "test", (later, later))
    return dest


def test_other_files_unchanged():
    assert (SRC / "test").is_file()
    assert "old ad-hoc test runner" in (SRC / "test").read_text()
    assert "ALL TESTS PASSED" in (SRC / "tests/test_stats.c").read_text()
    assert "return n ? (double)sum / (double)n : 0.0;" in (SRC / "src/stats.c").read_text()


def test_make_test_from_clean_tree(proj):
    r = make(proj, "test")
    assert r.returncode == 0, r.stdout + r.stderr
    assert "ALL TESTS PASSED" in r.stdout
    assert (proj / "build/test_stats").is_file()
    assert (proj / "build/libstats.a").is_file()
    # nothing to rebuild: the tests must still run (a file named `test` exists in the project)
    r = make(proj, "test")
    assert r.returncode == 0 and "ALL TESTS PASSED" in r.stdout, r.stdout


def test_default_target_does_not_run_tests(proj):
    r = make(proj)
    assert r.returncode == 0, r.stderr
    assert (proj / "build/stats_cli").is_file()
    assert "ALL TESTS PASSED" not in r.stdout
    assert not (proj / "build/test_stats").exists()
    out = subprocess.run([str(proj / "build/stats_cli"), "1", "2", "6"], capture_output=True, text=True).stdout
    assert out == "mean=3.00 min=1 max=6\n"


def test_failure_propagates_and_rebuilds(proj):
    assert make(proj, "test").returncode == 0
    src = proj / "src/stats.c"
    src.write_text(src.read_text().replace("if (xs[i] > m) m = xs[i];", "if (xs[i] < m) m = xs[i];"))
    future = time.time() + 5
    os.utime(src, (future, future))
    r = make(proj, "test")
    assert r.returncode != 0
    assert "FAILED" in r.stdout


def test_clean(proj):
    assert make(proj, "test").returncode == 0
    r = make(proj, "clean")
    assert r.returncode == 0
    assert not (proj / "build").exists()
    assert (proj / "test").is_file()
    r = make(proj, "test")
    assert r.returncode == 0 and "ALL TESTS PASSED" in r.stdout
