"""Writes a generated task's tests/test_outputs.py: named test functions over a small fixed
header, with the expected values computed from the generated data embedded as literals (the
tests are copied in only after the agent stops, so the agent never sees them)."""

from __future__ import annotations

import hashlib
import textwrap

HEADER = """import hashlib
import os
import stat
import subprocess
from pathlib import Path


def digest(path):
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def lines(path):
    return Path(path).read_text().splitlines()


def run(*args, cwd=None):
    return subprocess.run(list(args), capture_output=True, text=True, timeout=10, cwd=cwd)


def mode(path):
    return stat.S_IMODE(os.stat(path).st_mode)
"""


class VerifierTests:
    """Collects test functions, then renders them as one pytest file."""

    def __init__(self, helpers: str = "") -> None:
        self.helpers = helpers  # extra module-level code a family's tests share
        self.tests: list[tuple[str, str]] = []

    def add(self, name: str, body: str) -> VerifierTests:
        taken = {n for n, _ in self.tests}
        unique = next(
            f"{name}_{i}" if i else name for i in range(len(taken) + 1) if (f"{name}_{i}" if i else name) not in taken
        )
        self.tests.append((unique, textwrap.dedent(body).strip()))
        return self

    def value(self, path: str, expected: str) -> VerifierTests:
        """The file holds exactly `expected` (surrounding whitespace aside): a number, a word."""
        return self.add(f"value_{_slug(path)}", f"assert Path({path!r}).read_text().strip() == {expected!r}")

    def lines(self, path: str, expected: list[str]) -> VerifierTests:
        """The file's lines are exactly `expected`, in order."""
        return self.add(f"lines_{_slug(path)}", f"assert lines({path!r}) == {expected!r}")

    def unchanged(self, path: str, content: str) -> VerifierTests:
        """An input the task must leave as it was."""
        return self.add(f"unchanged_{_slug(path)}", f"assert digest({path!r}) == {sha256(content)!r}")

    def render(self) -> str:
        functions = [f"def test_{name}():\n{textwrap.indent(body, '    ')}\n" for name, body in self.tests]
        helpers = "\n\n" + textwrap.dedent(self.helpers).strip() + "\n" if self.helpers else ""
        return HEADER + helpers + "".join("\n\n" + f for f in functions)


def sha256(content: str) -> str:
    return hashlib.sha256(content.encode()).hexdigest()


def _slug(path: str) -> str:
    tail = "/".join(path.rstrip("/").split("/")[-2:])  # the file and its folder name the test
    return "".join(c if c.isalnum() else "_" for c in tail).strip("_").lower()
