"""Can the host stand in for a Dockerfile's base image? The bwrap backend runs on the host's
/usr, so a task's `FROM` is honoured only when the host is close enough: Debian, Ubuntu,
buildpack-deps, Debian-based `python:*` and the Terminal-Bench base images can (with notes
where versions differ); anything else cannot.

    stand_in("python:3.13-slim", host_info())
        -> StandIn(image, ok=True, notes=["FROM python:3.13-slim: python3 is the host's 3.11, not 3.13", ...])
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path


@dataclass
class StandIn:
    """Whether the host's system directories can stand in for a base image."""

    image: str
    ok: bool
    notes: list[str] = field(default_factory=list)  # version differences worth knowing
    reason: str = ""  # why not, when not ok


@dataclass(frozen=True)
class HostInfo:
    os_id: str  # "debian"
    os_version: str  # "12"
    codename: str  # "bookworm"
    pretty: str  # "Debian GNU/Linux 12 (bookworm)"
    python: str  # "3.11", "" when /usr/bin/python3 is missing


def host_info() -> HostInfo:
    """What /etc/os-release and /usr/bin/python3 say about this host."""
    fields: dict[str, str] = {}
    try:
        for line in Path("/etc/os-release").read_text().splitlines():
            key, sep, value = line.partition("=")
            if sep:
                fields[key.strip()] = value.strip().strip('"')
    except OSError:
        pass
    python = ""
    real = os.path.realpath("/usr/bin/python3")
    match = re.fullmatch(r"python(\d+\.\d+)", os.path.basename(real))
    if match and os.path.exists(real):
        python = match.group(1)
    return HostInfo(
        os_id=fields.get("ID", "linux"),
        os_version=fields.get("VERSION_ID", ""),
        codename=fields.get("VERSION_CODENAME", ""),
        pretty=fields.get("PRETTY_NAME", "this host"),
        python=python,
    )


def _cannot(image: str) -> str:
    return (
        f"FROM {image}: the host cannot stand in for this image (bwrap runs on the host's /usr); "
        "use the docker backend or a debian/ubuntu/python base"
    )


def stand_in(image: str, host: HostInfo | None = None) -> StandIn:
    """Can the host (Debian 12 with python3 3.11 here) play the part of `image`?"""
    host = host or host_info()
    reference = image.strip()
    lowered = reference.lower()
    repository = lowered.split("@", 1)[0]
    path, _, last = repository.rpartition("/")
    name, _, tag = last.partition(":")
    tag = tag or "latest"
    host_text = f"the host's {host.pretty}" + (f" with python3 {host.python}" if host.python else "")

    if "t-bench" in lowered or "terminal-bench" in lowered:
        notes = [f"FROM {image}: a Terminal-Bench base image; {host_text} stands in for it"]
        version = re.search(r"python-?(\d+)[-.](\d+)", last)
        if version and f"{version.group(1)}.{version.group(2)}" != host.python:
            notes.append(
                f"FROM {image}: python3 is the host's {host.python or 'none'}, "
                f"not {version.group(1)}.{version.group(2)}"
            )
        distro = re.search(r"(ubuntu|debian)-?(\d+)?(?:[-.](\d+))?", last)
        if distro and not (distro.group(1) == host.os_id and (distro.group(2) or "") in ("", host.os_version)):
            notes.append(f"FROM {image}: system packages are the host's {host.pretty}, not {distro.group(0)}")
        return StandIn(image, True, notes)

    if name == "scratch" and not path:
        return StandIn(image, False, reason=_cannot(image))
    if name in ("python", "debian", "ubuntu", "buildpack-deps"):
        if "alpine" in tag or "windows" in tag or "nanoserver" in tag:
            return StandIn(image, False, reason=_cannot(image))
        notes: list[str] = []
        if name == "python":
            version = re.match(r"(\d+)(?:\.(\d+))?", tag)
            wanted = (
                f"{version.group(1)}.{version.group(2)}"
                if version and version.group(2)
                else (version.group(1) if version else "")
            )
            if wanted and not (host.python == wanted or host.python.startswith(wanted + ".")):
                notes.append(f"FROM {image}: python3 is the host's {host.python or 'none'}, not {wanted}")
            notes.append(
                f"FROM {image}: `pip install` goes into the host's python3 through an overlay "
                "(its own packages are the host's)"
            )
        elif name == "ubuntu":
            notes.append(f"FROM {image}: {host_text} stands in; Ubuntu package names and versions can differ")
        else:
            if not _debian_tag_matches(tag, host):
                notes.append(f"FROM {image}: {host_text} stands in; package versions can differ")
        return StandIn(image, True, notes)
    return StandIn(image, False, reason=_cannot(image))


def _debian_tag_matches(tag: str, host: HostInfo) -> bool:
    head = re.split(r"[-]", tag, maxsplit=1)[0]
    return head in ("latest", "stable", "slim", host.codename, host.os_version) or (
        bool(host.os_version) and head.startswith(host.os_version + ".")
    )
