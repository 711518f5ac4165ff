import hashlib
import subprocess
from pathlib import Path

import pytest

MAKEFILE = ("CC = gcc\nCFLAGS = -std=c11 -Wall -Wextra -Werror -O2\n\nwc_lite: wc_lite.c\n"
            "\t$(CC) $(CFLAGS) -o $@ wc_lite.c\n\nclean:\n\trm -f wc_lite\n")


def ref(data: bytes):
    return data.count(b"\n"), len(data.split()), len(data)


@pytest.fixture(scope="module")
def binary(tmp_path_factory):
    out = tmp_path_factory.mktemp("bin") / "wc_lite"
    r = subprocess.run(["gcc", "-std=c11", "-Wall", "-Wextra", "-Werror", "-O2", "-o", str(out),
                        "/app/wc_lite/wc_lite.c"], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert r.stderr == ""
    return str(out)


def test_makefile_unchanged_and_binary_built():
    assert Path("/app/wc_lite/Makefile").read_text() == MAKEFILE
    r = subprocess.run(["/app/wc_lite/wc_lite"], input=b"a b\n", capture_output=True)
    assert r.stdout == b"1 2 4\n"


STDIN_CASES = [b"", b"hello", b"hello world\n", b"  a  b\t\tc\n\nd", b"\n\n\n", b"x\r\ny\x0bz\x0cw",
               bytes(range(256)) * 3, b"trailing space   ", "naïve café\n".encode()]


@pytest.mark.parametrize("data", STDIN_CASES, ids=[f"case{i}" for i in range(len(STDIN_CASES))])
def test_stdin(binary, data):
    for args in ([], ["-"]):
        r = subprocess.run([binary, *args], input=data, capture_output=True)
        assert r.returncode == 0
        assert r.stdout.decode() == "%d %d %d\n" % ref(data)


def test_files_and_total(binary, tmp_path):
    a = tmp_path / "a file.txt"
    b = tmp_path / "b.txt"
    a.write_bytes(b"one two\nthree")
    b.write_bytes(b"\n  four\n")
    r = subprocess.run([binary, str(a)], capture_output=True, text=True)
    assert (r.returncode, r.stdout) == (0, f"1 3 13 {a}\n")
    r = subprocess.run([binary, str(a), str(b)], capture_output=True, text=True)
    assert r.returncode == 0
    assert r.stdout == f"1 3 13 {a}\n2 1 8 {b}\n3 4 21 total\n"


def test_missing_file(binary, tmp_path):
    a = tmp_path / "a.txt"
    a.write_bytes(b"x y z\n")
    missing = tmp_path / "nope.txt"
    r = subprocess.run([binary, str(missing), str(a)], capture_output=True, text=True)
    assert r.returncode == 1
    assert r.stdout == f"1 3 6 {a}\n1 3 6 total\n"
    assert r.stderr == f"wc_lite: {missing}: No such file or directory\n"
    r = subprocess.run([binary, str(missing)], capture_output=True, text=True)
    assert (r.returncode, r.stdout) == (1, "")
