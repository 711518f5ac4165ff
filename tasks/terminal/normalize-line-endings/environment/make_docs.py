from pathlib import Path

root = Path("/app/docs")
files = {
    "guide.md": b"# Guide\r\n\r\nInstall it:  \r\n\r\n    make install\t\r\n\r\nDone.",
    "notes.txt": b"first note\t\rsecond note   \r\r  indented third\r",
    "sub/changelog.md": b"## 1.1\n- fixed bug   \r\n- added flag\n\n## 1.0\r\n- initial\r\n\r\n\r\n",
    "sub/clean.txt": b"already clean\n\nstill clean\n",
    "sub/trailing blank.txt": b"text with spaces in name\n \n\t\n\n",
    "empty.txt": b"",
    "data.csv": b"a,b\r\n1,2  \r\n",
    "logo.bin": bytes(range(256)) + b"\r\n \r\n",
    "run.sh.txt.orig": b"keep me\r\n",
}
for rel, data in files.items():
    p = root / rel
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_bytes(data)
