"""Seeded names and values for generated data: words, people, file stems."""

from __future__ import annotations

import random

WORDS = (
    "amber", "basil", "cedar", "delta", "ember", "fjord", "garnet", "harbor", "indigo", "juniper",
    "kestrel", "lagoon", "maple", "nectar", "onyx", "pepper", "quartz", "raven", "sierra", "tundra",
    "umber", "violet", "willow", "yarrow", "zephyr", "atlas", "bramble", "comet", "dune", "falcon",
)  # fmt: skip
PEOPLE = (
    "alice", "bruno", "carmen", "dmitri", "elena", "farid", "greta", "hiro", "ines", "jonas",
    "kavya", "liam", "mona", "nadia", "omar", "priya", "quinn", "rosa", "sven", "tomas",
)  # fmt: skip


def words(rng: random.Random, n: int) -> list[str]:
    """`n` distinct words."""
    return rng.sample(WORDS, n)


def people(rng: random.Random, n: int) -> list[str]:
    """`n` distinct lower-case first names."""
    return rng.sample(PEOPLE, n)


def stem(rng: random.Random) -> str:
    """A file or directory name like `cedar_42`."""
    return f"{rng.choice(WORDS)}_{rng.randint(10, 99)}"
