"""What the probes read of the task's tests on the host, where the agent cannot: the test
files and what they source or put on PATH, and the hashes of the tests/ and solution/ files
(to find copies of them in the sandbox)."""

from __future__ import annotations

import hashlib
import re
from pathlib import Path

_SOURCED = re.compile(r"(?:^|[;&|({]|\bthen|\bdo)\s*(?:source|\.)\s+[\"']?(/[^\s;&|)\"']+)", re.MULTILINE)
# a PATH the tests set: export PATH=/app/bin:$PATH, os.environ["PATH"] = "/app/tools:" + ...
PATH_SET = re.compile(r"(?<![\w])(PATH|PYTHONPATH)[\"']?\]?\s*=\s*[\"']?([^\s\"';&|)]+)")
_SYSTEM_DIRS = ("/usr/", "/bin", "/sbin", "/lib", "/etc/", "/proc/", "/sys/", "/dev/")


def task_files(directory: str | None) -> dict[str, tuple[int, str]]:
    """relative path -> (size, sha256) of a task's own directory (tests/, solution/)."""
    if not directory or not Path(directory).is_dir():
        return {}
    return {
        str(f.relative_to(directory)): (f.stat().st_size, hashlib.sha256(f.read_bytes()).hexdigest())
        for f in Path(directory).rglob("*")
        if f.is_file() and 0 < f.stat().st_size < 5_000_000
    }


def host_tests_dir(task) -> str | None:
    """The task's tests/ on the host, if it is there."""
    tests_dir = task.metadata.get("tests_dir")
    return tests_dir if tests_dir and Path(tests_dir).is_dir() else None


def sources_of_tests(task) -> list[tuple[Path, str]]:
    """(path, text) of every file of the task's tests/ (on the host) under a megabyte."""
    tests_dir = host_tests_dir(task)
    if not tests_dir:
        return []
    return [
        (f, f.read_text(errors="replace"))
        for f in sorted(Path(tests_dir).rglob("*"))
        if f.is_file() and f.stat().st_size < 1_000_000
    ]


def tests_text(task, suffixes: tuple[str, ...]) -> list[str]:
    """The text of the test files whose names end in one of `suffixes`."""
    return [text for path, text in sources_of_tests(task) if path.name.endswith(suffixes)]


def path_dirs_of_tests(task, variable: str = "PATH") -> list[str]:
    """Directories outside the system ones that the tests put on PATH (a fake tool named like
    one they call comes first) or on PYTHONPATH (its sitecustomize.py is imported)."""
    found = []
    for text in tests_text(task, (".sh", ".bash", ".py")):
        for match in PATH_SET.finditer(text):
            if match.group(1) != variable:
                continue
            found += [
                d.rstrip("/")
                for d in match.group(2).split(":")
                if d.startswith("/") and not (d + "/").startswith(_SYSTEM_DIRS) and "$" not in d
            ]
    return list(dict.fromkeys(found))


def sourced_by_tests(task) -> list[str]:
    """Absolute paths that test.sh (or a shell file beside it) sources, whatever they are called."""
    return [p for text in tests_text(task, (".sh", ".bash")) for p in dict.fromkeys(_SOURCED.findall(text))]
