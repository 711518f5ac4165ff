"""The families by name, their template ids, and `generate`: one instance of one family at
one difficulty (a template, wording and root drawn from the seed unless named)."""

from __future__ import annotations

from posttrain.errors import TaskSourceError, did_you_mean
from posttrain.tasks.terminal_gen.families import (
    archives,
    checksums,
    composite,
    csv_json,
    dates,
    diff_patch,
    env_config,
    files_dirs,
    find_size_time,
    git_ops,
    ini_yaml,
    line_endings,
    links,
    log_awk,
    permissions_find,
    script_fix,
    script_write,
    sed_edits,
    sqlite_queries,
    text_processing,
    xargs_batch,
)
from posttrain.tasks.terminal_gen.generated_task import DIFFICULTIES, Family, GeneratedTask
from posttrain.tasks.terminal_gen.layout import ROOTS

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
        xargs_batch,
        checksums,
        dates,
        ini_yaml,
        log_awk,
        sed_edits,
        diff_patch,
        find_size_time,
        links,
        line_endings,
        composite,
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


def check_family(name: str, domain: str | None = None, field: str = "") -> None:
    if name not in FAMILIES:
        known = ", ".join(FAMILIES)
        raise TaskSourceError(
            f"{_where(domain, field)}: unknown family {name!r}{did_you_mean(name, FAMILIES)}; known: {known}"
        )


def check_difficulty(difficulty: object, domain: str | None = None) -> None:
    if isinstance(difficulty, bool) or difficulty not in DIFFICULTIES:
        raise TaskSourceError(f"{_where(domain)}: unknown difficulty {difficulty!r}; choose from 1, 2, 3")


def template_ids(families: list[str] | None = None, difficulties: list[int] | None = None) -> list[str]:
    """Every template id of these families at these difficulties (default: all)."""
    return [
        tid
        for name in families or list(FAMILIES)
        for d in difficulties or list(DIFFICULTIES)
        for tid in FAMILIES[name].template_ids(d)
    ]


def parse_template_id(template: str, domain: str | None = None, field: str = "") -> tuple[str, int, str]:
    """'<family>/d<difficulty>/<slug>' -> (family, difficulty, slug), checked."""
    parts = template.split("/")
    if len(parts) == 3 and parts[0] in FAMILIES and parts[1] in {f"d{d}" for d in DIFFICULTIES}:
        family, difficulty = parts[0], int(parts[1][1:])
        if template in FAMILIES[family].template_ids(difficulty):
            return family, difficulty, parts[2]
    hint = (
        f"known in {parts[0]}: {', '.join(FAMILIES[parts[0]].template_ids())}"
        if parts[0] in FAMILIES
        else ("ids look like <family>/d<difficulty>/<template>, e.g. " + template_ids()[0])
    )
    raise TaskSourceError(f"{_where(domain, field)}: unknown template {template!r}; {hint}")


def check_root(root: str, domain: str | None = None) -> None:
    if root not in ROOTS:
        raise TaskSourceError(f"{_where(domain)}: unknown root {root!r}; choose from {', '.join(ROOTS)}")


def _where(domain: str | None, field: str = "") -> str:
    where = f"domain {domain!r}: terminal-gen" if domain else "terminal-gen"
    return f"{where}: {field}" if field else where


def generate(
    family: str,
    difficulty: int,
    seed: int,
    template: str | None = None,
    wording: str | None = None,
    root: str | None = None,
) -> GeneratedTask:
    check_family(family)
    check_difficulty(difficulty)
    if root is not None:
        check_root(root)
    return FAMILIES[family].generate(difficulty, seed, template=template, wording=wording, root=root)
