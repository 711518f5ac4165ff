"""One `[[domains]]` entry that stands for many: reasoning-gym and terminal-gen patterns expand
to a domain per generator; one that does not load is named and left out (an error with
strict); a pattern that leaves nothing is an error."""

import pytest

from posttrain.config import parse_config
from posttrain.errors import TaskSourceError
from posttrain.tasks.domain_patterns import expand_domains


def config(*domains):
    return parse_config({"domains": list(domains)}, "test.toml")


def test_patterns_expand_to_a_domain_per_generator_with_the_entrys_keys():
    notes = []
    expanded = expand_domains(
        config(
            {"name": "rg", "source": "reasoning-gym:*", "heldout": 4, "weight": 2.0},
            {"name": "term", "source": "terminal-gen:*", "kind": "terminal"},
            {"name": "plain", "source": "reasoning-gym:basic_arithmetic"},
        ),
        log=notes.append,
    )
    names = [d.name for d in expanded.domains]
    assert len(names) >= 100 and names[-1] == "plain"
    assert "rg-basic_arithmetic" in names and "term-git" in names
    arithmetic = next(d for d in expanded.domains if d.name == "rg-basic_arithmetic")
    assert (arithmetic.source, arithmetic.heldout, arithmetic.weight) == ("reasoning-gym:basic_arithmetic", 4, 2.0)
    assert all(d.kind == "terminal" for d in expanded.domains if d.name.startswith("term-"))
    # `composite` needs datasets named in its params: left out with a line saying so
    assert "rg-composite" not in names and any("reasoning-gym:composite left out" in n for n in notes)
    # terminal-gen's `composite` chains other families' templates: alone it has none to train on
    assert "term-composite" not in names
    assert any("terminal-gen:composite left out" in n and "no training template" in n for n in notes)


def test_a_glob_selects_and_strict_makes_a_left_out_generator_an_error():
    expanded = expand_domains(config({"name": "arc", "source": "reasoning-gym:arc_*"}))
    assert [d.name for d in expanded.domains] == ["arc-arc_1d", "arc-arc_agi"]
    with pytest.raises(TaskSourceError, match="reasoning-gym:composite left out"):
        expand_domains(config({"name": "c", "source": "reasoning-gym:comp*"}), strict=True)


def test_a_pattern_that_leaves_nothing_and_names_that_clash_are_errors():
    with pytest.raises(TaskSourceError, match=r"domains\[0\].source: 'reasoning-gym:zzz\*' expands to no domain"):
        expand_domains(config({"name": "z", "source": "reasoning-gym:zzz*"}))
    with pytest.raises(TaskSourceError, match="names that are taken: rg-basic_arithmetic"):
        expand_domains(
            config(
                {"name": "rg", "source": "reasoning-gym:basic_*"},
                {"name": "rg-basic_arithmetic", "source": "reasoning-gym:basic_arithmetic"},
            )
        )


def test_a_config_without_patterns_is_returned_as_it_is():
    plain = config({"name": "a", "source": "reasoning-gym:basic_arithmetic"})
    assert expand_domains(plain) is plain
