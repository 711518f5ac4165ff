"""Domains by pattern: one `[[domains]]` entry that stands for many.

    source = "reasoning-gym:*"           every reasoning-gym generator, one domain each
    source = "reasoning-gym:arc_*"       those whose name matches the glob
    source = "terminal-gen:*"            every generated terminal family, one domain each

Each expanded domain is the entry with its own source and the name `<name>-<generator>` (the
entry's other keys apply to every one of them). A generator that does not load with the
entry's params, or does not produce an item, is named in one line and left out; with
`strict` that line is an error instead. A pattern that leaves nothing is an error either way.
The expansion happens once, when a run starts: the run's config.toml lists the domains it made.
"""

from __future__ import annotations

from collections.abc import Callable
from fnmatch import fnmatchcase

from posttrain.config import DomainConfig, RunConfig
from posttrain.errors import TaskSourceError

PATTERN_PREFIXES = ("reasoning-gym:", "terminal-gen:")


def is_pattern(source: str) -> bool:
    return source.startswith(PATTERN_PREFIXES) and any(c in source for c in "*?[")


def expand_domains(config: RunConfig, strict: bool = False, log: Callable[[str], None] = print) -> RunConfig:
    """`config` with every pattern domain replaced by the domains it stands for."""
    if not any(is_pattern(d.source) for d in config.domains):
        return config
    domains: list[DomainConfig] = []
    for index, domain in enumerate(config.domains):
        if not is_pattern(domain.source):
            domains.append(domain)
            continue
        prefix, pattern = domain.source.split(":", 1)
        names = [n for n in _candidates(prefix) if fnmatchcase(n, pattern)]
        kept = []
        for name in names:
            expanded = domain.model_copy(update={"name": f"{domain.name}-{name}", "source": f"{prefix}:{name}"})
            problem = _load_problem(expanded)
            if problem is None:
                kept.append(expanded)
                continue
            line = f"domains[{index}] ({domain.source}): {prefix}:{name} left out: {problem}"
            if strict:
                raise TaskSourceError(line)
            log(line)
        if not kept:
            raise TaskSourceError(
                f"domains[{index}].source: {domain.source!r} expands to no domain that loads "
                f"({len(names)} matched the pattern; posttrain tasks sources lists the names)"
            )
        domains.extend(kept)
    taken = [d.name for d in domains]
    clashes = sorted({n for n in taken if taken.count(n) > 1})
    if clashes:
        raise TaskSourceError(f"domains: the expansion makes names that are taken: {', '.join(clashes[:5])}")
    return config.model_copy(update={"domains": domains})


def _candidates(prefix: str) -> list[str]:
    if prefix == "terminal-gen":
        from posttrain.tasks.terminal_gen import FAMILIES

        return sorted(FAMILIES)
    from reasoning_gym.factory import DATASETS

    from posttrain.tasks.reasoning_gym_import import import_reasoning_gym

    import_reasoning_gym()  # registers the generators
    return sorted(DATASETS)


def _load_problem(domain: DomainConfig) -> str | None:
    """Why the domain's source cannot give its first item (None when it can)."""
    if domain.source.startswith("terminal-gen:"):
        return _family_problem(domain)
    from posttrain.tasks.sources import ReasoningGymSource

    try:
        source = ReasoningGymSource(
            domain.name,
            domain.source.split(":", 1)[1],
            domain.seed,
            2,
            domain.params,
            domain.prompt_template,
            domain.answer_extraction or "answer_tag",
        )
        source.get(0)
    except Exception as exc:  # noqa: BLE001 - any failure of a third-party generator leaves it out
        return f"{type(exc).__name__}: {str(exc)[:200]}"
    return None


def _family_problem(domain: DomainConfig) -> str | None:
    """Why a generated terminal family cannot train alone (a composite chains other families'
    templates, which a domain of it alone does not train), or None."""
    from posttrain.tasks.terminal_gen.heldout_split import split_templates

    try:
        split_templates(
            domain.name,
            [domain.source.split(":", 1)[1]],
            domain.difficulties(),
            heldout_families=domain.heldout_families,
            heldout_templates=domain.heldout_templates,
            fraction=domain.heldout_template_fraction,
            seed=domain.seed,
        )
    except TaskSourceError as exc:
        return f"{type(exc).__name__}: {str(exc)[:200]}"
    return None
