"""The held-out protocol of generated terminal domains: the split by template and family id
at construction, the training source that never yields a held-out template or family, the
held-out sets built from a domain's config, and the errors of a bad held-out request."""

from pathlib import Path

import pytest

from posttrain.config import parse_config
from posttrain.errors import ConfigError, TaskSourceError
from posttrain.pipeline.build import build_mixture, build_source
from posttrain.pipeline.heldout_sets import extra_heldout, template_split
from posttrain.tasks.terminal_gen import FAMILIES, TerminalGenSource
from posttrain.tasks.terminal_gen.heldout_split import split_templates

HANDWRITTEN = Path(__file__).resolve().parents[2] / "tasks" / "terminal"


def domain_config(**keys):
    base = dict(name="t", source="terminal-gen:all", kind="terminal", difficulty=[1, 2, 3], size=400, heldout=6)
    return parse_config({"domains": [{**base, **keys}]}).domains[0]


def test_the_split_holds_out_whole_families_named_templates_and_a_seeded_fraction_per_cell():
    families = list(FAMILIES)
    split = split_templates(
        "t", families, [1, 2, 3], ["git", "sqlite"], ["text-processing/d2/user-total"], fraction=0.25, seed=3
    )
    assert split.families == ["git", "sqlite"] and "git" not in split.trained_families
    assert "text-processing/d2/user-total" in split.templates
    assert not set(split.training) & set(split.templates)
    for family in split.trained_families:
        for difficulty in (1, 2, 3):
            cell = FAMILIES[family].template_ids(difficulty)
            kept = [t for t in cell if t in split.training]
            assert kept and len(cell) - len(kept) >= int(0.25 * len(cell))
    again = split_templates(
        "t", families, [1, 2, 3], ["git", "sqlite"], ["text-processing/d2/user-total"], fraction=0.25, seed=3
    )
    other_seed = split_templates("t", families, [1, 2, 3], ["git", "sqlite"], [], fraction=0.25, seed=4)
    assert again == split and other_seed.templates != split.templates


def test_no_training_item_comes_from_a_heldout_template_or_family(tmp_path):
    # the seed draws each item's template, so every trained template occurs only when each cell
    # gets enough items: 40 a cell leaves a template unseen with odds (3/4)^40 at worst
    cfg = domain_config(
        size=40 * 3 * len(FAMILIES),
        heldout_families=["git", "archives"],
        heldout_templates=["files-dirs/d1/rename", "text-processing/d3/items-above"],
        heldout_template_fraction=0.25,
    )
    split = template_split(cfg)
    source = build_source(cfg, tmp_path)
    assert isinstance(source, TerminalGenSource) and set(source.template_ids()) == set(split.training)
    seen_templates, seen_families = set(), set()
    for index in range(len(source)):  # every index, not a sample
        task = source.generated(index)
        seen_templates.add(task.template)
        seen_families.add(task.family)
    assert not seen_templates & set(split.templates) and not seen_families & {"git", "archives"}
    assert seen_templates == set(split.training)  # and every trained template does occur


def test_the_four_heldout_sets_come_from_the_config(tmp_path):
    cfg = domain_config(
        heldout_families=["sqlite"],
        heldout_template_fraction=0.5,
        heldout_template_items=5,
        heldout_family_items=3,
        heldout_handwritten=str(HANDWRITTEN),
        heldout_handwritten_items=4,
    )
    split = template_split(cfg)
    extra = extra_heldout(cfg, tmp_path)
    by_set = {name: [t for t in extra if t.metadata["heldout_set"] == name] for name in ("templates", "families")}
    assert len(by_set["templates"]) == 5 and all(t.metadata["template"] in split.templates for t in by_set["templates"])
    assert len(by_set["families"]) == 3 and all(t.metadata["family"] == "sqlite" for t in by_set["families"])
    handwritten = [t for t in extra if t.metadata["heldout_set"] == "handwritten"]
    assert [t.id for t in handwritten] == sorted(p.name for p in HANDWRITTEN.iterdir() if (p / "task.toml").is_file())[
        :4
    ]

    config = parse_config({"domains": [cfg.model_dump(exclude_unset=True)]})
    mixture = build_mixture(config, tmp_path, gate=False)
    domain = mixture.domains["t"]
    sets = [t.metadata["heldout_set"] for t in domain.heldout]
    assert sets == ["instances"] * 6 + ["templates"] * 5 + ["families"] * 3 + ["handwritten"] * 4
    cursor = 0
    for _ in range(40):
        task, cursor = domain.training_task(cursor)
        assert task.metadata["template"] in split.training and "heldout_set" not in task.metadata


@pytest.mark.parametrize(
    "keys, message",
    [
        (dict(heldout_families=["nope"]), "domain 't': terminal-gen: heldout_families: unknown family 'nope'"),
        (dict(heldout_templates=["git/d1/nope"]), "domain 't': terminal-gen: heldout_templates: unknown template"),
        (dict(heldout_templates=["gitt"]), "heldout_templates: unknown template 'gitt'; ids look like"),
        (
            dict(source="terminal-gen:git,sqlite", heldout_families=["git", "sqlite"]),
            "domain 't': terminal-gen: heldout_families holds out every family of the domain",
        ),
        (
            dict(source="terminal-gen:git", heldout_families=["sqlite"]),
            "heldout_families: 'sqlite' is not one of the domain's families",
        ),
        (
            dict(
                source="terminal-gen:files-dirs", difficulty=1, heldout_templates=FAMILIES["files-dirs"].template_ids(1)
            ),
            "leave no training template for files-dirs difficulty 1",
        ),
        (
            dict(source="terminal-gen:git", difficulty=1, heldout_templates=["files-dirs/d1/rename"]),
            "heldout_templates: 'files-dirs/d1/rename' is not a template of a trained family",
        ),
    ],
)
def test_a_bad_heldout_request_is_one_clear_error(tmp_path, keys, message):
    with pytest.raises(TaskSourceError) as caught:
        build_source(domain_config(**keys), tmp_path)
    assert message in str(caught.value) and "\n" not in str(caught.value)


def test_config_checks_the_heldout_keys():
    with pytest.raises(ConfigError, match="heldout_families applies only to a terminal-gen: source"):
        parse_config(
            {"domains": [{"name": "a", "source": "reasoning-gym:basic_arithmetic", "heldout_families": ["x"]}]}
        )
    with pytest.raises(ConfigError, match="heldout_template_fraction"):
        domain_config(heldout_template_fraction=1.0)
    with pytest.raises(ConfigError, match="heldout_family_items"):
        domain_config(heldout_family_items=-1)


def test_a_missing_handwritten_folder_is_one_clear_error(tmp_path):
    with pytest.raises(TaskSourceError, match="domain 't': heldout_handwritten: .*nowhere is not a folder"):
        extra_heldout(domain_config(heldout_handwritten="nowhere"), tmp_path)


def test_a_composite_trains_only_when_every_template_it_chains_trains():
    split = split_templates(
        "t", list(FAMILIES), [1, 2], ["dates"], ["text-processing/d1/grep-level"], fraction=0.0, seed=0
    )
    trained_composites = {t for t in split.training if t.startswith("composite/")}
    assert "composite/d1/grep-then-chmod" in split.templates  # chains a held-out template
    assert "composite/d1/weekday-then-link" in split.templates  # chains a held-out family
    assert "composite/d1/column-then-backup" in trained_composites
    for template in trained_composites:
        family, level, slug = template.split("/")
        uses = next(t.uses for t in FAMILIES[family].templates[int(level[1:])] if t.slug == slug)
        assert uses and all(u in split.training for u in uses)


def test_composites_train_in_a_domain_without_the_difficulty_of_the_parts_they_chain():
    split = split_templates("t", list(FAMILIES), [2, 3], fraction=0.0, seed=0)
    assert not split.templates and any(t.startswith("composite/d2/") for t in split.training)
    held = split_templates("t", list(FAMILIES), [2, 3], ["dates"], fraction=0.0, seed=0)
    for template in (t for t in held.training if t.startswith("composite/")):
        family, level, slug = template.split("/")
        uses = next(t.uses for t in FAMILIES[family].templates[int(level[1:])] if t.slug == slug)
        assert not any(u.startswith("dates/") for u in uses)  # never a held-out family's move
