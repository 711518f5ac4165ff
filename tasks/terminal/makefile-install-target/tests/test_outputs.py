import os
import shutil
import stat
import subprocess
from pathlib import Path

import pytest

SRC = Path("/app/greet")
FILES = {"bin/greet": 0o755, "share/man/man1/greet.1": 0o644, "share/doc/greet/README": 0o644}


def make(cwd, *args):
    return subprocess.run(["make", *args], cwd=cwd, capture_output=True, text=True, timeout=60)


def files_under(root):
    out = set()
    for d, _, fs in os.walk(root):
        for f in fs:
            out.add(os.path.relpath(os.path.join(d, f), root))
    return out


@pytest.fixture()
def proj(tmp_path):
    dest = tmp_path / "greet"
    shutil.copytree(SRC, dest)
    for junk in ("greet", "greet.o"):
        (dest / junk).unlink(missing_ok=True)
    return dest


def test_sources_unchanged():
    assert "Greetings, %s." in (SRC / "greet.c").read_text()
    assert (SRC / "README").read_text() == "greet 1.0\n\nPrints a greeting.\n"


def test_install_with_prefix_and_destdir(proj, tmp_path):
    stage = tmp_path / "stage"
    r = make(proj, "install", "PREFIX=/opt/greet", f"DESTDIR={stage}")
    assert r.returncode == 0, r.stdout + r.stderr
    assert files_under(stage) == {f"opt/greet/{rel}" for rel in FILES}
    for rel, mode in FILES.items():
        assert stat.S_IMODE((stage / "opt/greet" / rel).stat().st_mode) == mode, rel
    assert (stage / "opt/greet/share/man/man1/greet.1").read_text() == (SRC / "greet.1").read_text()
    out = subprocess.run([str(stage / "opt/greet/bin/greet"), "Ada"], capture_output=True, text=True).stdout
    assert out == "Greetings, Ada.\n"
    r = make(proj, "install", "PREFIX=/opt/greet", f"DESTDIR={stage}")
    assert r.returncode == 0, r.stderr


def test_default_prefix(proj, tmp_path):
    stage = tmp_path / "stage2"
    r = make(proj, "install", f"DESTDIR={stage}")
    assert r.returncode == 0, r.stderr
    assert files_under(stage) == {f"usr/local/{rel}" for rel in FILES}


def test_uninstall(proj, tmp_path):
    stage = tmp_path / "stage3"
    assert make(proj, "install", "PREFIX=/usr", f"DESTDIR={stage}").returncode == 0
    (stage / "usr/bin/other").write_text("keep")
    r = make(proj, "uninstall", "PREFIX=/usr", f"DESTDIR={stage}")
    assert r.returncode == 0, r.stderr
    assert files_under(stage) == {"usr/bin/other"}
    r = make(proj, "uninstall", "PREFIX=/usr", f"DESTDIR={stage}")
    assert r.returncode == 0, r.stderr


def test_phony_targets(proj, tmp_path):
    for name in ("install", "uninstall"):
        (proj / name).write_text("a file with a target's name\n")
    stage = tmp_path / "stage4"
    r = make(proj, "install", f"DESTDIR={stage}")
    assert r.returncode == 0 and (stage / "usr/local/bin/greet").is_file(), r.stdout
    r = make(proj, "uninstall", f"DESTDIR={stage}")
    assert r.returncode == 0 and not (stage / "usr/local/bin/greet").exists(), r.stdout
