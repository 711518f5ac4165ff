"""Where a generated task's files live and how its instruction names them (the paths axis).

A `Layout` is a task root (not always /app), whether the instruction states a working
directory and names paths relative to it, and whether the folders a template asks for get
names with spaces. Builders name every path through it: `path` (absolute, for tests),
`sh` (absolute and shell-quoted, for the reference steps), `show` (as the instruction writes it).

The roots are the ones a bwrap sandbox can write (posttrain/sandbox/dockerfile.py's
WRITABLE_ROOTS): /app, under /root (HOME) and under /opt (a system overlay). /srv and /home are
read-only host directories there, so no layout uses them.
"""

from __future__ import annotations

import posixpath
import random
import shlex
from dataclasses import dataclass

ROOTS = ("/app", "/opt/work", "/root/project", "/opt/srv/data")


@dataclass(frozen=True)
class Layout:
    root: str = "/app"
    relative: bool = False  # the instruction states the working directory and uses relative paths
    spaced: bool = False  # folder names chosen with `folder` get a space

    def path(self, relative: str = "") -> str:
        """The absolute path of `relative` (a path under the root)."""
        return posixpath.join(self.root, relative) if relative else self.root

    def sh(self, relative: str = "") -> str:
        """The absolute path, quoted for a shell command."""
        return shlex.quote(self.path(relative))

    def show(self, relative: str = "") -> str:
        """The path as the instruction writes it: relative to the working directory or absolute,
        in quotes when it holds a space."""
        shown = (relative or ".") if self.relative else self.path(relative)
        return f"'{shown}'" if " " in shown else shown

    def folder(self, plain: str, spaced: str) -> str:
        """A folder name: `spaced` (one with a space) in a spaced layout, else `plain`."""
        return spaced if self.spaced else plain


DEFAULT = Layout()


def choose_layout(rng: random.Random, root: str | None = None) -> Layout:
    """A seeded layout: /app half the time, a stated working directory a third of the time,
    names with spaces a quarter of the time."""
    chosen = root or (ROOTS[0] if rng.random() < 0.5 else rng.choice(ROOTS[1:]))
    return Layout(chosen, relative=rng.random() < 1 / 3, spaced=rng.random() < 0.25)
