import hashlib
import shutil
import subprocess
from pathlib import Path

import pytest

SRC = Path("/app/calc")
HASHES = {
    "include/rpn.h": "60d2d338a350f0cb9b9d0c304b97c8d49e82e8221d627394ae11cc279d3ced45",
    "include/stack.h": "1894d2158c788ad3f91fad17ead12fd53790b68c74ae133aad5b25dc432fbafb",
    "src/main.c": "413cfc01f36ba930d5a6b573c1da3f050f40efe0651564e3190713e893defc9c",
    "src/rpn.c": "24301df13bd75187ba05d1b746bbefa76b3c0d5b8014939c08ad91a1d79dc18a",
    "src/stack.c": "dbab7d0d879d3c771e388d6eb1e06448a2b43ba7bd98c03b5284343965122590",
}
CASES = [("3 4 + 2 *", "14\n"), ("2 sqrt", "1.41421\n"), ("2 10 ^", "1024\n"), ("9 sqrt 2 /", "1.5\n"),
         ("1.5 2.25 + 0.5 -", "3.25\n")]


def test_sources_unchanged():
    for rel, digest in HASHES.items():
        assert hashlib.sha256((SRC / rel).read_bytes()).hexdigest() == digest, rel
    assert sorted(p.name for p in (SRC / "src").iterdir()) == ["main.c", "rpn.c", "stack.c"]


def test_built_binary_left_in_place():
    r = subprocess.run([str(SRC / "bin/calc"), "3 4 + 2 *"], capture_output=True, text=True)
    assert r.stdout == "14\n"


@pytest.fixture(scope="module")
def fresh(tmp_path_factory):
    dest = tmp_path_factory.mktemp("b") / "calc"
    shutil.copytree(SRC, dest, symlinks=True)
    shutil.rmtree(dest / "build", ignore_errors=True)
    shutil.rmtree(dest / "bin", ignore_errors=True)
    r = subprocess.run(["make"], cwd=dest, capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stdout + r.stderr
    return dest


def test_fresh_build_outputs(fresh):
    for obj in ("main.o", "rpn.o", "stack.o"):
        assert (fresh / "build" / obj).is_file()
    for expr, want in CASES:
        r = subprocess.run([str(fresh / "bin/calc"), expr], capture_output=True, text=True)
        assert (r.returncode, r.stdout) == (0, want), expr
    r = subprocess.run([str(fresh / "bin/calc"), "1 2 3"], capture_output=True, text=True)
    assert r.returncode == 1


def test_clean_and_rebuild(fresh):
    r = subprocess.run(["make", "clean"], cwd=fresh, capture_output=True, text=True, timeout=30)
    assert r.returncode == 0
    assert not (fresh / "build").exists() and not (fresh / "bin").exists()
    r = subprocess.run(["make"], cwd=fresh, capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    assert subprocess.run([str(fresh / "bin/calc"), "2 10 ^"], capture_output=True, text=True).stdout == "1024\n"
