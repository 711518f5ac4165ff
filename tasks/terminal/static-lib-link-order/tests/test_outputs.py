import shutil
import subprocess
from pathlib import Path

import pytest

SRC = Path("/app/geo")


@pytest.fixture(scope="module")
def fresh(tmp_path_factory):
    dest = tmp_path_factory.mktemp("g") / "geo"
    shutil.copytree(SRC, dest, symlinks=True)
    shutil.rmtree(dest / "build", ignore_errors=True)
    shutil.rmtree(dest / "bin", ignore_errors=True)
    r = subprocess.run(["make"], cwd=dest, capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stdout + r.stderr
    return dest, r.stdout


def test_sources_unchanged():
    assert "mx_sqrt(mx_sq(a.x - b.x) + mx_sq(a.y - b.y))" in (SRC / "src/geom/geom.c").read_text()
    assert sorted(p.name for p in (SRC / "src").rglob("*.c")) == ["geom.c", "main.c", "mathx.c"]


def test_binary_left_in_place():
    r = subprocess.run([str(SRC / "bin/geo"), "0", "0", "3", "0", "0", "4"], capture_output=True, text=True)
    assert r.stdout == "12.0000\n"


def test_fresh_build_works(fresh):
    dest, _ = fresh
    for args, want in ((["0", "0", "3", "0", "3", "4", "0", "4"], "14.0000\n"),
                       (["0", "0", "3", "0", "0", "4"], "12.0000\n"),
                       (["1", "1", "2", "2"], "2.8284\n")):
        r = subprocess.run([str(dest / "bin/geo"), *args], capture_output=True, text=True)
        assert r.stdout == want


def test_links_against_static_libs(fresh):
    dest, out = fresh
    assert (dest / "build/libgeom.a").is_file() and (dest / "build/libmathx.a").is_file()
    link = [l for l in out.splitlines() if "-o bin/geo" in l]
    assert len(link) == 1, out
    words = link[0].split()
    assert "-lgeom" in words and "-lmathx" in words
    assert words.index("-lgeom") < words.index("-lmathx")
    assert "build/main.o" in words and words.index("build/main.o") < words.index("-lgeom")
    for bad in ("build/geom.o", "build/mathx.o", "src/geom/geom.c", "src/mathx/mathx.c"):
        assert bad not in words
