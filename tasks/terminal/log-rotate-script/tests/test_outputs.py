import gzip
import os
import stat
import subprocess
from pathlib import Path

import pytest

SCRIPT = "/app/bin/rotate-logs.sh"


def run(*args):
    return subprocess.run([SCRIPT, *map(str, args)], capture_output=True, text=True, timeout=20)


def gz(path):
    return gzip.decompress(Path(path).read_bytes()).decode()


def listing(d):
    return sorted(p.name for p in Path(d).iterdir())


@pytest.fixture()
def logs(tmp_path):
    d = tmp_path / "log dir"
    d.mkdir()
    (d / "app.log").write_text("app run 1\n")
    os.chmod(d / "app.log", 0o640)
    (d / "my service.log").write_text("svc run 5\n")
    for n in range(1, 5):
        (d / f"my service.log.{n}.gz").write_bytes(gzip.compress(f"svc run {5 - n}\n".encode()))
    (d / "empty.log").write_text("")
    (d / "empty.log.1.gz").write_bytes(gzip.compress(b"old empty\n"))
    (d / "notes.txt").write_text("not a log\n")
    (d / "holes.log").write_text("h3\n")
    (d / "holes.log.1.gz").write_bytes(gzip.compress(b"h2\n"))
    (d / "holes.log.3.gz").write_bytes(gzip.compress(b"h0\n"))
    (d / "sub").mkdir()
    (d / "sub" / "deep.log").write_text("deep\n")
    return d


def test_script_basics():
    assert os.access(SCRIPT, os.X_OK)
    assert Path(SCRIPT).read_text().startswith("#!/bin/bash")


def test_first_rotation(logs):
    ino = os.stat(logs / "app.log").st_ino
    r = run(logs)
    assert r.returncode == 0, r.stderr
    assert r.stdout == ""
    assert listing(logs) == sorted([
        "app.log", "app.log.1.gz",
        "my service.log", "my service.log.1.gz", "my service.log.2.gz", "my service.log.3.gz", "my service.log.4.gz",
        "empty.log", "empty.log.1.gz", "notes.txt", "sub",
        "holes.log", "holes.log.1.gz", "holes.log.2.gz", "holes.log.4.gz"])
    st = os.stat(logs / "app.log")
    assert st.st_ino == ino and st.st_size == 0 and stat.S_IMODE(st.st_mode) == 0o640
    assert gz(logs / "app.log.1.gz") == "app run 1\n"
    for n in range(1, 5):
        assert gz(logs / f"my service.log.{n}.gz") == f"svc run {6 - n}\n"
    assert (logs / "my service.log").read_text() == ""
    assert gz(logs / "empty.log.1.gz") == "old empty\n"
    assert [gz(logs / f"holes.log.{n}.gz") for n in (1, 2, 4)] == ["h3\n", "h2\n", "h0\n"]
    assert (logs / "sub" / "deep.log").read_text() == "deep\n"
    assert (logs / "notes.txt").read_text() == "not a log\n"


def test_repeated_rotation_and_keep(logs):
    assert run(logs).returncode == 0
    (logs / "app.log").write_text("app run 2\n")
    r = run(logs, 2)
    assert r.returncode == 0, r.stderr
    assert gz(logs / "app.log.1.gz") == "app run 2\n"
    assert gz(logs / "app.log.2.gz") == "app run 1\n"
    # my service.log was empty after the first rotation: untouched by the second
    assert sorted(p.name for p in logs.glob("my service.log*")) == [
        "my service.log", "my service.log.1.gz", "my service.log.2.gz", "my service.log.3.gz", "my service.log.4.gz"]
    (logs / "my service.log").write_text("svc run 6\n")
    assert run(logs, 2).returncode == 0
    assert sorted(p.name for p in logs.glob("my service.log*")) == [
        "my service.log", "my service.log.1.gz", "my service.log.2.gz"]
    assert gz(logs / "my service.log.1.gz") == "svc run 6\n"
    assert gz(logs / "my service.log.2.gz") == "svc run 5\n"


def test_keep_one(tmp_path):
    d = tmp_path / "d"
    d.mkdir()
    (d / "a.log").write_text("x\n")
    (d / "a.log.1.gz").write_bytes(gzip.compress(b"old\n"))
    assert run(d, 1).returncode == 0
    assert listing(d) == ["a.log", "a.log.1.gz"]
    assert gz(d / "a.log.1.gz") == "x\n"


def test_errors(tmp_path):
    assert run(tmp_path / "missing").returncode == 1
    for bad in ("0", "-2", "two"):
        r = run(tmp_path, bad)
        assert r.returncode == 1 and r.stderr.strip(), bad
