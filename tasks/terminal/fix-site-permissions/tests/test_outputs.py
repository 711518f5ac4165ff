import os
import stat
from pathlib import Path

ROOT = Path("/app/site")
EXPECTED = {
    "": 0o755,
    "public": 0o755,
    "public/index.html": 0o644,
    "public/about us.html": 0o644,
    "public/css": 0o755,
    "public/css/site.css": 0o644,
    "public/tools": 0o755,
    "public/tools/build site.sh": 0o755,
    "public/tools/README": 0o644,
    "cgi-bin": 0o755,
    "cgi-bin/form.cgi": 0o750,
    "cgi-bin/search.cgi": 0o750,
    "cgi-bin/helpers.pl": 0o644,
    "cgi-bin/notes.cgi.txt": 0o644,
    "private": 0o700,
    "private/keys": 0o700,
    "private/keys/server.key": 0o600,
    "private/db password.txt": 0o600,
    "private/rotate.sh": 0o600,
    "uploads": 0o1777,
    "uploads/photo 1.jpg": 0o644,
    "uploads/.hidden": 0o644,
}
LINKS = {"public/host.txt": "/etc/hostname", "public/key-link": "../private/keys/server.key"}


def all_entries():
    out = {""}
    for d, dirs, files in os.walk(ROOT):
        for name in dirs + files:
            out.add(os.path.relpath(os.path.join(d, name), ROOT))
    return out


def test_nothing_added_or_removed():
    assert all_entries() == set(EXPECTED) | set(LINKS)


def test_modes():
    wrong = {}
    for rel, mode in EXPECTED.items():
        p = ROOT / rel
        assert not p.is_symlink()
        got = stat.S_IMODE(os.lstat(p).st_mode)
        if got != mode:
            wrong[rel] = oct(got)
    assert wrong == {}


def test_links_untouched_and_content():
    for rel, target in LINKS.items():
        assert os.path.islink(ROOT / rel) and os.readlink(ROOT / rel) == target
    for rel in EXPECTED:
        p = ROOT / rel
        if p.is_file():
            assert p.read_text() == f"content of {rel}\n"
