"""What a directory given to the dashboard is: a training run, an eval run or an inspection."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from posttrain.errors import PosttrainError

RUN, EVAL, INSPECT = "run", "eval", "inspect"

# the files that mark each kind, checked in this order (an eval never has report.json, ...)
MARKERS = (
    (INSPECT, ("report.json",)),
    (EVAL, ("eval.json", "results.jsonl")),
    (RUN, ("metrics.jsonl", "config.toml", "trajectories.sqlite")),
)


class NotADashboardDirectory(PosttrainError):
    pass


@dataclass(frozen=True)
class Directory:
    """One directory the dashboard shows; `index` is its place in the URL (/run/0, /eval/1)."""

    index: int
    kind: str
    path: Path

    @property
    def name(self) -> str:
        return self.path.name or str(self.path)


def directory_kind(path: Path) -> str:
    if not path.exists():
        raise NotADashboardDirectory(f"{path}: no such directory")
    if not path.is_dir():
        raise NotADashboardDirectory(f"{path}: not a directory (give a run, eval or inspect directory)")
    for kind, names in MARKERS:
        if any((path / name).is_file() for name in names):
            return kind
    wanted = ", ".join(name for _, names in MARKERS for name in names)
    raise NotADashboardDirectory(f"{path}: not a run, eval or inspect directory (it has none of {wanted})")


def open_directories(paths: list[Path]) -> tuple[list[Directory], list[str]]:
    """(the paths that are dashboard directories, one line for each that is not). None at all
    is an error naming each path: there would be nothing to serve."""
    found, problems = [], []
    for path in paths:
        try:
            found.append(Directory(len(found), directory_kind(path), path))
        except NotADashboardDirectory as exc:
            problems.append(str(exc))
    if not found:
        raise NotADashboardDirectory("\n".join(problems))
    return found, problems
