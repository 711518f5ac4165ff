"""What a sandbox sees of the host: system directories read-only and a minimal /etc."""

from __future__ import annotations

import os
import shutil
import uuid
from pathlib import Path

# Files of the host's /etc that programs need and that hold no secrets.
_ETC_COPY = ("ld.so.cache", "ld.so.conf", "localtime", "nsswitch.conf", "protocols", "services",
             "mime.types", "os-release", "debian_version", "inputrc", "bash.bashrc", "profile")
_ETC_TREES = ("alternatives", "ld.so.conf.d", "ssl", "ca-certificates", "python3", "python3.11", "profile.d")
_SYSTEM_DIRS = ("usr", "bin", "sbin", "lib", "lib32", "lib64", "libx32", "opt")

_PASSWD = "root:x:0:0:root:/root:/bin/bash\nnobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n"
_GROUP = "root:x:0:\nnogroup:x:65534:\n"
_HOSTS = "127.0.0.1 localhost sandbox\n::1 localhost ip6-localhost ip6-loopback\n"


def minimal_etc(base: Path) -> Path:
    """A /etc for sandboxes, built once per base directory: copies of harmless host files,
    and generated passwd/group/hosts (no shadow, no host users, no host keys)."""
    etc = base / "etc"
    if (etc / "passwd").is_file():
        return etc
    tmp = base / f".etc-{uuid.uuid4().hex}"
    tmp.mkdir(parents=True)
    for name in _ETC_COPY:
        src = Path("/etc") / name
        if src.is_file():
            shutil.copy2(src, tmp / name, follow_symlinks=True)
    for name in _ETC_TREES:
        src = Path("/etc") / name
        if src.is_dir():
            shutil.copytree(src, tmp / name, symlinks=True, ignore_dangling_symlinks=True)
    (tmp / "passwd").write_text(_PASSWD)
    (tmp / "group").write_text(_GROUP)
    (tmp / "hosts").write_text(_HOSTS)
    (tmp / "hostname").write_text("sandbox\n")
    resolv = Path("/etc/resolv.conf")
    (tmp / "resolv.conf").write_text(resolv.read_text() if resolv.is_file() else "")
    try:
        os.rename(tmp, etc)
    except OSError:
        shutil.rmtree(tmp, ignore_errors=True)
    return etc


def system_binds(rootfs: Path | None) -> list[str]:
    """bwrap arguments exposing the system directories read-only (symlinks stay symlinks,
    as on merged-/usr systems), or a chosen root filesystem in their place."""
    if rootfs is not None:
        return ["--ro-bind", str(rootfs), "/"]
    args: list[str] = []
    for name in _SYSTEM_DIRS:
        host = Path("/") / name
        if host.is_symlink():
            args += ["--symlink", os.readlink(host), f"/{name}"]
        elif host.is_dir():
            args += ["--ro-bind", str(host), f"/{name}"]
    return args
