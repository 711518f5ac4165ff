import os
import subprocess
import tarfile
from pathlib import Path

import pytest

SCRIPT = "/app/bin/mkbackup.sh"


def run(*args):
    return subprocess.run([SCRIPT, *args], capture_output=True, text=True, timeout=20)


@pytest.fixture()
def src(tmp_path):
    s = tmp_path / "source dir"
    (s / "sub dir").mkdir(parents=True)
    (s / "a.txt").write_text("alpha\n")
    (s / "sub dir" / "b.txt").write_text("beta\n")
    return s


def names(d, prefix="backup"):
    return sorted((p.name for p in Path(d).glob(f"{prefix}-*.tar.gz")), key=lambda n: int(n.split("-")[-1][:-7]))


def test_is_executable_bash_script():
    assert os.access(SCRIPT, os.X_OK)
    assert Path(SCRIPT).read_text().startswith("#!/bin/bash")
    assert "getopts" in Path(SCRIPT).read_text()


def test_first_backup_and_contents(src, tmp_path):
    dest = tmp_path / "dest dir" / "nested"
    r = run(str(src), str(dest))
    assert r.returncode == 0, r.stderr
    assert r.stdout == f"{dest}/backup-1.tar.gz\n"
    with tarfile.open(dest / "backup-1.tar.gz", "r:gz") as tar:
        members = {os.path.normpath(m.name) for m in tar.getmembers() if m.isfile()}
        assert members == {"a.txt", "sub dir/b.txt"}
        f = [m for m in tar.getmembers() if os.path.normpath(m.name) == "a.txt"][0]
        assert tar.extractfile(f).read() == b"alpha\n"


def test_numbering_is_numeric_and_rotation(src, tmp_path):
    dest = tmp_path / "d"
    dest.mkdir()
    for n in (1, 2, 9, 10):
        (dest / f"backup-{n}.tar.gz").write_text("old")
    (dest / "other-50.tar.gz").write_text("keep")
    (dest / "backup-notes.txt").write_text("keep")
    r = run("-k", "2", str(src), str(dest))
    assert r.returncode == 0, r.stderr
    assert r.stdout == f"{dest}/backup-11.tar.gz\n"
    assert names(dest) == ["backup-10.tar.gz", "backup-11.tar.gz"]
    assert (dest / "other-50.tar.gz").exists() and (dest / "backup-notes.txt").exists()


def test_default_keep_and_prefix(src, tmp_path):
    dest = tmp_path / "d"
    for i in range(5):
        r = run("-p", "site", str(src), str(dest))
        assert r.returncode == 0, r.stderr
        assert r.stdout == f"{dest}/site-{i + 1}.tar.gz\n"
    assert names(dest, "site") == ["site-3.tar.gz", "site-4.tar.gz", "site-5.tar.gz"]
    assert names(dest) == []


def test_dry_run(src, tmp_path):
    dest = tmp_path / "d"
    dest.mkdir()
    for n in (3, 4, 7):
        (dest / f"backup-{n}.tar.gz").write_text("old")
    r = run("-n", "-k", "2", str(src), str(dest))
    assert r.returncode == 0, r.stderr
    assert r.stdout == (f"would create {dest}/backup-8.tar.gz\nwould delete {dest}/backup-3.tar.gz\n"
                        f"would delete {dest}/backup-4.tar.gz\n")
    assert names(dest) == ["backup-3.tar.gz", "backup-4.tar.gz", "backup-7.tar.gz"]


@pytest.mark.parametrize("args", [
    [], ["only-one"], ["a", "b", "c"], ["-k"], ["-k", "0", "S", "D"], ["-k", "-1", "S", "D"],
    ["-k", "abc", "S", "D"], ["-x", "S", "D"], ["-k", "2.5", "S", "D"],
])
def test_usage_errors(args, src, tmp_path):
    args = [str(src) if a == "S" else str(tmp_path / "never") if a == "D" else a for a in args]
    r = run(*args)
    assert r.returncode == 2, (args, r.returncode)
    assert r.stderr.startswith("usage:") or "\nusage:" in r.stderr, r.stderr
    assert r.stdout == ""
    assert not (tmp_path / "never").exists()


def test_missing_source(tmp_path):
    r = run(str(tmp_path / "no such dir"), str(tmp_path / "d"))
    assert r.returncode == 1
    assert r.stderr.strip() != ""
    assert not (tmp_path / "d").exists() or names(tmp_path / "d") == []
