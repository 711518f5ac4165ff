import os
from pathlib import Path

root = Path("/app/storage")
sizes = {
    "backups/db-2024-01.sql": 250_000,
    "backups/db-2024-02.sql": 102_400,      # exactly 100 KiB: not larger
    "backups/db-2024-03.sql": 102_401,
    "media/intro video.mp4": 1_500_000,
    "media/thumb.png": 40_000,
    "media/poster.jpg": 101_000,    # > 100 kB but < 100 KiB
    "media/raw/take 2.wav": 800_000,
    "logs/app.log": 99_999,
    "logs/app.log.1": 150_000,
    ".cache/blob.bin": 300_000,
    "empty.txt": 0,
    "README": 1_200,
}
for rel, size in sizes.items():
    p = root / rel
    p.parent.mkdir(parents=True, exist_ok=True)
    with open(p, "wb") as fh:
        fh.write((rel.encode() + b"\n") * (size // (len(rel) + 1)))
        fh.write(b"x" * (size % (len(rel) + 1)))
os.symlink("media/intro video.mp4", root / "latest.mp4")
