"""What a sandbox sees of the host: system directories read-only and a minimal /etc."""

from __future__ import annotations

import os
import shutil
import uuid
from pathlib import Path

# Files of the host's /etc that programs need and that hold no secrets.
_ETC_COPY = (
    "ld.so.cache",
    "ld.so.conf",
    "localtime",
    "nsswitch.conf",
    "protocols",
    "services",
    "mime.types",
    "os-release",
    "debian_version",
    "inputrc",
    "bash.bashrc",
    "profile",
)
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


# Never copied into a system-mode /etc: secrets and host identity.
_ETC_SECRETS = (
    "shadow",
    "shadow-",
    "gshadow",
    "gshadow-",
    "sudoers",
    "sudoers.d",
    "ssh",
    "ssl/private",
    "machine-id",
    "hosts",
    "hostname",
    "subuid",
    "subgid",
)


def system_etc(base: Path) -> Path:
    """The /etc a system-mode sandbox starts from (its lowest layer): the host's /etc, so apt,
    dpkg and pip find their configuration and the system users and groups packages refer to,
    minus secrets (shadow files, ssh keys, sudoers), with a generated hosts. Built once per
    base directory."""
    etc = base / "system-etc-v3"
    if (etc / "hosts").is_file():
        return etc
    tmp = base / f".system-etc-{uuid.uuid4().hex}"

    def ignore(directory: str, names: list[str]) -> list[str]:
        rel = os.path.relpath(directory, "/etc")
        return [n for n in names if os.path.normpath(os.path.join(rel, n)) in _ETC_SECRETS]

    shutil.copytree(
        "/etc", tmp, symlinks=True, ignore=ignore, ignore_dangling_symlinks=True, copy_function=_copy_readable
    )
    # apt's download and list directories belong to the host's _apt user, a uid the sandbox
    # cannot map: apt works in its own directories, as root
    apt_conf = tmp / "apt" / "apt.conf.d"
    apt_conf.mkdir(parents=True, exist_ok=True)
    (apt_conf / "99posttrain-sandbox").write_text(
        'APT::Sandbox::User "root";\n'
        'Dir::Cache::Archives "/var/cache/apt/sandbox-archives/";\n'
        'Dir::State::Lists "/var/lib/apt/sandbox-lists/";\n'
    )
    minimal = minimal_etc(base)
    for name in ("hosts", "hostname", "resolv.conf"):
        target = tmp / name
        if target.is_symlink() or target.exists():
            target.unlink()
        shutil.copy2(minimal / name, target)
    try:
        os.rename(tmp, etc)
    except OSError:
        shutil.rmtree(tmp, ignore_errors=True)
    return etc


def _copy_readable(src: str, dst: str) -> None:
    try:
        shutil.copy2(src, dst)
    except OSError:  # sockets, unreadable files: a sandbox can do without them
        pass


def system_lowers(base: Path) -> dict[str, Path]:
    """System mode: the host directory each writable system directory is layered over."""
    lowers = {
        name: Path("/") / name
        for name in ("usr", "var", "opt")
        if (Path("/") / name).is_dir() and not (Path("/") / name).is_symlink()
    }
    lowers["etc"] = system_etc(base)
    return lowers


def system_binds(rootfs: Path | None, writable: dict[str, Path] | None = None) -> list[str]:
    """bwrap arguments exposing the system directories read-only (symlinks stay symlinks,
    as on merged-/usr systems), or a chosen root filesystem in their place. `writable` maps
    system directories to the overlay mounted for them in system mode."""
    if rootfs is not None:
        return ["--ro-bind", str(rootfs), "/"]
    writable = writable or {}
    args: list[str] = []
    for name, target in writable.items():
        args += ["--bind", str(target), f"/{name}"]
    for name in _SYSTEM_DIRS:
        if name in writable:
            continue
        host = Path("/") / name
        if host.is_symlink():
            args += ["--symlink", os.readlink(host), f"/{name}"]
        elif host.is_dir():
            args += ["--ro-bind", str(host), f"/{name}"]
    return args
