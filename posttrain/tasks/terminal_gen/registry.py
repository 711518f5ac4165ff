"""The families by name, and `generate`: one instance of one family at one difficulty."""

from __future__ import annotations

from posttrain.errors import TaskSourceError, did_you_mean
from posttrain.tasks.terminal_gen.families import (
    archives,
    csv_json,
    env_config,
    files_dirs,
    git_ops,
    permissions_find,
    script_fix,
    script_write,
    sqlite_queries,
    text_processing,
)
from posttrain.tasks.terminal_gen.generated_task import DIFFICULTIES, Family, GeneratedTask

FAMILIES: dict[str, Family] = {
    module.FAMILY.name: module.FAMILY
    for module in (
        files_dirs,
        text_processing,
        csv_json,
        script_fix,
        git_ops,
        permissions_find,
        script_write,
        sqlite_queries,
        archives,
        env_config,
    )
}


def family_names(spec: str, domain: str | None = None) -> list[str]:
    """'all', or comma-separated family names -> the names, checked."""
    names = list(FAMILIES) if spec.strip() == "all" else [n.strip() for n in spec.split(",") if n.strip()]
    if not names:
        raise TaskSourceError(f"{_where(domain)}: no family named; choose all or from {', '.join(FAMILIES)}")
    for name in names:
        check_family(name, domain)
    return names


def check_family(name: str, domain: str | None = None) -> None:
    if name not in FAMILIES:
        raise TaskSourceError(
            f"{_where(domain)}: unknown family {name!r}{did_you_mean(name, FAMILIES)}; known: {', '.join(FAMILIES)}"
        )


def check_difficulty(difficulty: object, domain: str | None = None) -> None:
    if isinstance(difficulty, bool) or difficulty not in DIFFICULTIES:
        raise TaskSourceError(f"{_where(domain)}: unknown difficulty {difficulty!r}; choose from 1, 2, 3")


def _where(domain: str | None) -> str:
    return f"domain {domain!r}: terminal-gen" if domain else "terminal-gen"


def generate(family: str, difficulty: int, seed: int) -> GeneratedTask:
    check_family(family)
    check_difficulty(difficulty)
    return FAMILIES[family].generate(difficulty, seed)
