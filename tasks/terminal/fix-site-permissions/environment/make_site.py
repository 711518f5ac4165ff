import os
from pathlib import Path

root = Path("/app/site")
entries = {  # path -> initial mode (files) ; dirs end with /
    "": 0o777,
    "public/": 0o700,
    "public/index.html": 0o666,
    "public/about us.html": 0o600,
    "public/css/": 0o777,
    "public/css/site.css": 0o755,
    "public/tools/": 0o750,
    "public/tools/build site.sh": 0o644,
    "public/tools/README": 0o777,
    "cgi-bin/": 0o777,
    "cgi-bin/form.cgi": 0o644,
    "cgi-bin/search.cgi": 0o777,
    "cgi-bin/helpers.pl": 0o777,
    "cgi-bin/notes.cgi.txt": 0o600,
    "private/": 0o755,
    "private/keys/": 0o777,
    "private/keys/server.key": 0o644,
    "private/db password.txt": 0o666,
    "private/rotate.sh": 0o755,
    "uploads/": 0o755,
    "uploads/photo 1.jpg": 0o777,
    "uploads/.hidden": 0o700,
}
for rel, mode in entries.items():
    p = root / rel
    if rel == "" or rel.endswith("/"):
        p.mkdir(parents=True, exist_ok=True)
    else:
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(f"content of {rel}\n")
for rel, mode in sorted(entries.items(), key=lambda kv: -len(kv[0])):
    os.chmod(root / rel, mode)
os.symlink("/etc/hostname", root / "public" / "host.txt")
os.symlink("../private/keys/server.key", root / "public" / "key-link")
