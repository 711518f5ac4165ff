"""The held-out protocol's split of a generated domain, by template and family id, made once
at construction: training draws only from `training`; the `templates` set from held-out
templates of trained families; the `families` set from families never trained on.

    split = split_templates("term", families, [1, 2], heldout_families=["sqlite"],
                            heldout_templates=["git/d1/commit-new"], fraction=0.25, seed=0)
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from posttrain.errors import TaskSourceError
from posttrain.tasks.terminal_gen.registry import FAMILIES, check_family, parse_template_id


@dataclass(frozen=True)
class TemplateSplit:
    trained_families: list[str]
    training: list[str]  # template ids training may draw from
    templates: list[str]  # held-out template ids of trained families
    families: list[str]  # held-out families (all their templates)


def split_templates(
    domain: str,
    families: list[str],
    difficulties: list[int],
    heldout_families: list[str] = (),
    heldout_templates: list[str] = (),
    fraction: float = 0.0,
    seed: int = 0,
) -> TemplateSplit:
    """Splits the templates of `families` at `difficulties`; `fraction` holds out, in each
    (family, difficulty) cell, that share of its templates (rounded down), picked by `seed`.
    Every cell of a trained family keeps at least one training template, or this raises."""
    where = f"domain {domain!r}: terminal-gen"
    for name in heldout_families:
        check_family(name, domain, field="heldout_families")
        if name not in families:
            raise TaskSourceError(
                f"{where}: heldout_families: {name!r} is not one of the domain's families ({', '.join(families)})"
            )
    trained = [f for f in families if f not in heldout_families]
    if not trained:
        raise TaskSourceError(f"{where}: heldout_families holds out every family of the domain; no training data left")
    held = set()
    for template in heldout_templates:
        family, difficulty, _ = parse_template_id(template, domain, field="heldout_templates")
        if family not in trained or difficulty not in difficulties:
            raise TaskSourceError(
                f"{where}: heldout_templates: {template!r} is not a template of a trained family at the domain's "
                f"difficulties ({', '.join(map(str, difficulties))})"
            )
        held.add(template)
    training, heldout = [], []
    # composites last: they may train only when every template they chain trains
    for family in sorted(trained, key=lambda f: _chains(f)):
        for difficulty in difficulties:
            cell = FAMILIES[family].template_ids(difficulty)
            unusable = {t for t in cell if _uses_heldout(t, heldout, families, heldout_families)}
            rest = [t for t in cell if t not in held and t not in unusable]
            drawn = random.Random(f"heldout:{seed}:{family}:{difficulty}").sample(
                rest, min(len(rest), max(0, int(fraction * len(cell)) - len(unusable)))
            )
            kept = [t for t in rest if t not in drawn]
            if not kept:
                raise TaskSourceError(
                    f"{where}: heldout_templates and heldout_template_fraction leave no training template for "
                    f"{family} difficulty {difficulty}"
                )
            training += kept
            heldout += [t for t in cell if t not in kept]
    return TemplateSplit(trained, training, heldout, [f for f in families if f in heldout_families])


def _chains(family: str) -> bool:
    return any(t.uses for cell in FAMILIES[family].templates.values() for t in cell)


def _uses_heldout(template: str, heldout: list[str], families: list[str], heldout_families: list[str]) -> bool:
    """A composite chaining a held-out template, or one of a family held out or outside the
    domain, would teach what the held-out sets measure. A chained template of a difficulty
    the domain does not draw (a d2 composite's d1 parts in a d2-d3 domain) is no held-out item."""
    family, difficulty, slug = parse_template_id(template)
    uses = next(t.uses for t in FAMILIES[family].templates[difficulty] if t.slug == slug)
    return any(u.split("/")[0] in heldout_families or u.split("/")[0] not in families or u in heldout for u in uses)
