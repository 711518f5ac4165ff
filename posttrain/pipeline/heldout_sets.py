"""A generated terminal domain's held-out protocol, from its config: the template split made
at construction, the training source that draws only from trained templates of trained
families, and the held-out sets beyond `instances` (the domain's own held-out prefix):

    templates     held-out templates of trained families (heldout_templates, heldout_template_fraction)
    families      families never trained on (heldout_families)
    handwritten   the Harbor tasks of heldout_handwritten (e.g. tasks/terminal)

Each held-out task carries its set's name in metadata["heldout_set"]; summary.json's
`heldout` table groups the stage evaluations by it (stage_summary.heldout_table).
"""

from __future__ import annotations

from pathlib import Path

from posttrain.config import DomainConfig, config_relative_path
from posttrain.errors import TaskSourceError
from posttrain.tasks.records import Task
from posttrain.tasks.sources import HarborSource, content_key
from posttrain.tasks.terminal_gen import TerminalGenSource, family_names
from posttrain.tasks.terminal_gen.heldout_split import TemplateSplit, split_templates

HELDOUT_SETS = ("instances", "templates", "families", "handwritten")
# the seed offset of a held-out set's own generator: its instances differ from the training ones
SET_SEED_OFFSET = {"templates": 1_000_003, "families": 2_000_003}


def template_split(cfg: DomainConfig) -> TemplateSplit:
    return split_templates(
        cfg.name,
        family_names(cfg.terminal_gen_families(), domain=cfg.name),
        cfg.difficulties(),
        heldout_families=cfg.heldout_families,
        heldout_templates=cfg.heldout_templates,
        fraction=cfg.heldout_template_fraction,
        seed=cfg.seed,
    )


def training_source(cfg: DomainConfig) -> TerminalGenSource:
    """The domain's source: trained templates of trained families only."""
    split = template_split(cfg)
    protocol = cfg.heldout_families or cfg.heldout_templates or cfg.heldout_template_fraction
    return TerminalGenSource(
        domain=cfg.name,
        families=split.trained_families,
        difficulties=cfg.difficulties(),
        seed=cfg.seed,
        size=cfg.size,
        templates=split.training if protocol else None,
    )


def extra_heldout(cfg: DomainConfig, base_dir: Path) -> list[Task]:
    """The `templates`, `families` and `handwritten` sets of a terminal-gen domain (empty
    for any other domain, or when its config asks for none), each task tagged with its set."""
    if cfg.terminal_gen_families() is None:
        return []
    split = template_split(cfg)
    tasks: list[Task] = []
    generated = {
        "templates": (split.trained_families, split.templates, cfg.heldout_template_items),
        "families": (split.families, None, cfg.heldout_family_items),
    }
    for name, (families, templates, items) in generated.items():
        if not families or templates == []:
            continue
        size = cfg.heldout if items is None else items
        source = TerminalGenSource(
            cfg.name,
            families,
            cfg.difficulties(),
            seed=cfg.seed + SET_SEED_OFFSET[name],
            size=max(size * 4, 1),
            templates=templates,
        )
        tasks += tagged(distinct(source, size), name)
    if cfg.heldout_handwritten is not None:
        root = config_relative_path(cfg.heldout_handwritten, base_dir)
        if not root.is_dir():
            raise TaskSourceError(f"domain {cfg.name!r}: heldout_handwritten: {root} is not a folder of Harbor tasks")
        handwritten = sorted(HarborSource(cfg.name, root).tasks, key=lambda t: t.id)
        tasks += tagged(handwritten[: cfg.heldout_handwritten_items], "handwritten")
    return tasks


def distinct(source, size: int) -> list[Task]:
    """The first `size` items of `source` with distinct content."""
    taken, keys = [], set()
    for index in range(len(source)):
        if len(taken) == size:
            break
        task = source.get(index)
        if content_key(task) not in keys:
            keys.add(content_key(task))
            taken.append(task)
    return taken


def tagged(tasks: list[Task], name: str) -> list[Task]:
    for task in tasks:
        task.metadata["heldout_set"] = name
    return tasks


def heldout_set_of(tasks: list[Task]) -> dict[str, str]:
    """Task id -> its held-out set, for the tasks that carry one."""
    return {t.id: t.metadata["heldout_set"] for t in tasks if "heldout_set" in t.metadata}
