import os
import shutil
import subprocess
import time
from pathlib import Path

import pytest

SRC = Path("/app/fw")


def make(cwd, *args):
    return subprocess.run(["make", *args], cwd=cwd, capture_output=True, text=True, timeout=60)


def run_fw(cwd, *args):
    return subprocess.run([str(cwd / "build/fw"), *args], capture_output=True, text=True).stdout


def bump(path, text, offset):
    path.write_text(text)
    t = time.time() + offset
    os.utime(path, (t, t))


def stamps(cwd):
    return {p.name: p.stat().st_mtime_ns for p in (cwd / "build").iterdir() if p.is_file()}


@pytest.fixture(scope="module")
def proj(tmp_path_factory):
    dest = tmp_path_factory.mktemp("fw") / "fw"
    shutil.copytree(SRC, dest, symlinks=True)
    shutil.rmtree(dest / "build", ignore_errors=True)
    return dest


def test_other_files_unchanged():
    assert (SRC / "VERSION").read_text() == "2.3.1\n"
    assert "sleep 0.4" in (SRC / "gen/mkversion.sh").read_text()
    assert '#define GREETING "hello"' in (SRC / "src/util.h").read_text()


def test_single_targets_from_clean_tree(proj):
    for target in ("build/version.h", "build/fw"):
        shutil.rmtree(proj / "build", ignore_errors=True)
        r = make(proj, "-j8", target)
        assert r.returncode == 0, (target, r.stdout + r.stderr)
        assert (proj / target).is_file()


def test_parallel_clean_builds(proj):
    for _ in range(2):
        shutil.rmtree(proj / "build", ignore_errors=True)
        r = make(proj, "-j8")
        assert r.returncode == 0, r.stdout + r.stderr
        assert run_fw(proj, "--version") == "fw 2.3.1\n"
        assert run_fw(proj) == "hello from fw 2.3.1 (id 28676)\n"


def test_serial_clean_build(proj):
    shutil.rmtree(proj / "build", ignore_errors=True)
    r = make(proj)
    assert r.returncode == 0, r.stdout + r.stderr
    assert run_fw(proj, "--version") == "fw 2.3.1\n"


def test_noop_rebuild(proj):
    assert make(proj, "-j8").returncode == 0
    before = stamps(proj)
    time.sleep(0.05)
    r = make(proj, "-j8")
    assert r.returncode == 0
    assert stamps(proj) == before, r.stdout


def test_version_change_rebuilds(proj):
    bump(proj / "VERSION", "2.4.0\n", 5)
    r = make(proj, "-j8")
    assert r.returncode == 0, r.stderr
    assert run_fw(proj, "--version") == "fw 2.4.0\n"
    assert run_fw(proj).startswith("hello from fw 2.4.0 (id ")


def test_header_change_rebuilds(proj):
    util_h = proj / "src/util.h"
    bump(util_h, util_h.read_text().replace('"hello"', '"howdy"'), 10)
    r = make(proj, "-j8")
    assert r.returncode == 0, r.stderr
    assert run_fw(proj).startswith("howdy from fw 2.4.0 (id ")


def test_clean(proj):
    assert make(proj, "clean").returncode == 0
    assert not (proj / "build").exists()
