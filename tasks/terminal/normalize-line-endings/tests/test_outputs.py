import os
from pathlib import Path

ROOT = Path("/app/docs")
EXPECTED = {
    "guide.md": b"# Guide\n\nInstall it:\n\n    make install\n\nDone.\n",
    "notes.txt": b"first note\nsecond note\n\n  indented third\n",
    "sub/changelog.md": b"## 1.1\n- fixed bug\n- added flag\n\n## 1.0\n- initial\n",
    "sub/clean.txt": b"already clean\n\nstill clean\n",
    "sub/trailing blank.txt": b"text with spaces in name\n",
    "empty.txt": b"",
    "data.csv": b"a,b\r\n1,2  \r\n",
    "logo.bin": bytes(range(256)) + b"\r\n \r\n",
    "run.sh.txt.orig": b"keep me\r\n",
}


def test_file_set():
    found = set()
    for d, _, files in os.walk(ROOT):
        for f in files:
            found.add(os.path.relpath(os.path.join(d, f), ROOT))
    assert found == set(EXPECTED)


def test_contents():
    for rel, data in EXPECTED.items():
        assert (ROOT / rel).read_bytes() == data, rel
