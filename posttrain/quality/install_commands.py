"""The packages a shell command installs with apt, pip or npm, as written (version specs
kept), from a Dockerfile's RUN steps or a test.sh: the lint looks for their pins, the
environment check for the packages themselves."""

from __future__ import annotations

import re
import shlex

_INSTALL = {
    "apt": re.compile(r"apt(?:-get)?\s+install\s+([^&|;\n]+)"),
    "pip": re.compile(r"(?:pip3?|python3? -m pip|uv pip)\s+install\s+([^&|;\n]+)"),
    "npm": re.compile(r"(?:npm|yarn|pnpm)\s+(?:install|add)\s+([^&|;\n]+)"),
}
# apt and pip options whose value is the next word: a requirements file is no package
_TAKES_VALUE = (
    "-r",
    "-c",
    "-e",
    "--requirement",
    "--constraint",
    "-t",
    "--target",
    "-i",
    "--index-url",
    "--extra-index-url",
    "-o",
)


def installed_packages(command: str, manager: str) -> list[str]:
    """The package arguments of every `install` by `manager` ("apt", "pip" or "npm") in
    `command`: options, the values of apt's and pip's options that take one, and paths are left
    out; so is an install whose quotes do not pair up on its line."""
    packages: list[str] = []
    for match in _INSTALL[manager].finditer(command):
        try:
            words = shlex.split(match.group(1)) if match.group(1).count("'") % 2 == 0 else []
        except ValueError:  # a double quote opened before the install and closed after it
            words = []
        skip_next = False
        for word in words:
            if skip_next:
                skip_next = False
                continue
            if manager != "npm" and word in _TAKES_VALUE:
                skip_next = True
                continue
            if word.startswith("-") or "/" in word or word.startswith("."):
                continue
            packages.append(word)
    return packages
