"""Paths a task's text names: the outputs its instruction asks for and the files its tests
check. The probes write to the first; the lint compares the two."""

from __future__ import annotations

import re
from pathlib import Path, PurePosixPath

# absolute paths, or relative names with an extension, as an instruction or a test writes them
_ABSOLUTE = re.compile(r"(?<![\w.~-])(/(?:[\w.@+-]+/)*[\w.@+-]+/?)")
_RELATIVE = re.compile(r"(?<![\w/.-])((?:[\w@+-]+/)*[\w@+-]+\.[A-Za-z][\w]{0,7})(?![\w/])")
_NOT_OUTPUTS = (
    "/tests",
    "/logs",
    "/solution",
    "/proc",
    "/sys",
    "/dev",
    "/bin",
    "/sbin",
    "/lib",
    "/usr/bin",
    "/usr/lib",
    "/usr/share",
    "/usr/include",
)
_CODE_SUFFIXES = (".py", ".sh", ".md")  # named in tests as code, rarely as outputs


def _outside_harness(path: str) -> bool:
    return not any(path == p or path.startswith(p + "/") for p in _NOT_OUTPUTS)


def instruction_paths(text: str, workdir: str = "/app") -> list[str]:
    """Absolute paths the instruction names (relative names resolved against the workdir),
    in order of appearance, without the harness's own directories."""
    found: list[str] = []
    for match in _ABSOLUTE.finditer(text):
        path = match.group(1).rstrip(".,:;")
        if path.count("/") >= 2 or "." in path.rsplit("/", 1)[-1] or path.endswith("/"):
            found.append(path)
    # a relative name is under the working directory, or under a directory the text names
    # ("in /app/repo, write out/totals.json")
    bases = [workdir.rstrip("/"), *(p.rstrip("/") for p in found if not PurePosixPath(p).suffix)]
    for match in _RELATIVE.finditer(text):
        name = match.group(1)
        if not re.fullmatch(r"\d+(\.\d+)+", name) and not name.startswith(("e.g", "i.e")):
            found += [f"{base}/{name}" for base in dict.fromkeys(bases) if base]
    unique = list(dict.fromkeys(p for p in found if _outside_harness(p)))
    return unique


def checked_paths(tests_dir: Path | str) -> list[str]:
    """Absolute paths outside the harness directories that the test files mention."""
    found: list[str] = []
    for file in sorted(Path(tests_dir).rglob("*")):
        if not file.is_file() or file.stat().st_size > 1_000_000:
            continue
        try:
            text = file.read_text(errors="replace")
        except OSError:
            continue
        for match in _ABSOLUTE.finditer(text):
            path = match.group(1).rstrip(".,:;")
            if path.count("/") >= 2 and _outside_harness(path) and not path.startswith(("/etc/", "/usr/", "/var/lib/")):
                found.append(path)
    return list(dict.fromkeys(found))
