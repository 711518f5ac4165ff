"""API keys: `--api-key KEY` (repeatable, or $POSTTRAIN_API_KEY) and `--api-key-file FILE` (one
key per line, `#` comments), and the constant-time check of a request's `Authorization` header."""

from __future__ import annotations

import hmac
import ipaddress
from pathlib import Path

from posttrain.errors import PosttrainError


def read_key_file(path: Path) -> list[str]:
    """The keys in FILE: one a line; blank lines and lines starting with `#` are skipped (a
    `#` inside a key is part of it). A file that is
    missing, unreadable or holds no key is one error line naming it."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise PosttrainError(f"--api-key-file {path}: no such file") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise PosttrainError(f"--api-key-file {path}: cannot read it ({exc})") from None
    keys = []
    for number, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        if any(c.isspace() for c in line):
            raise PosttrainError(f"--api-key-file {path}, line {number}: a key cannot contain spaces")
        keys.append(line)
    if not keys:
        raise PosttrainError(f"--api-key-file {path}: holds no key (one a line, # for comments)")
    return keys


def exposure_warning(host: str, has_keys: bool) -> str | None:
    """The warning line for a server listening beyond this machine with no API key, else None.
    A host name other than localhost counts as beyond it."""
    if has_keys:
        return None
    if host == "localhost":
        return None
    try:
        if ipaddress.ip_address(host.strip("[]")).is_loopback:
            return None
    except ValueError:
        pass
    return (
        f"--host {host}: listening beyond this machine without an API key; anyone who can reach the port "
        "can use the model (add --api-key or --api-key-file)"
    )


class ApiKeys:
    def __init__(self, keys: list[str] | tuple[str, ...]) -> None:
        self._keys = [key.encode() for key in dict.fromkeys(keys)]

    def __bool__(self) -> bool:
        return bool(self._keys)

    def match(self, authorization: str | None) -> str | None:
        """The key `Authorization: Bearer KEY` names, or None. Every key is compared (with
        hmac.compare_digest) whichever matches, so the time taken tells nothing about them."""
        if not authorization:
            return None
        scheme, _, given = authorization.partition(" ")
        if scheme.lower() != "bearer":
            return None
        candidate = given.strip().encode()
        found = None
        for key in self._keys:
            if hmac.compare_digest(candidate, key):
                found = key
        return found.decode() if found is not None else None
