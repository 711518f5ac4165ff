"""The records of a generated terminal task: what a template builds (`TaskParts`), the
template (`Template`), the family of templates (`Family`) and the finished task (`GeneratedTask`).

A task is one point on four axes, all drawn from its seed unless named: the template (which
operation, per family and difficulty), the wording (wording.WORDINGS), the layout (layout.py:
root, stated working directory, names with spaces) and the data the template generates."""

from __future__ import annotations

import hashlib
import json
import random
from collections.abc import Callable
from dataclasses import dataclass, field

from posttrain.errors import TaskSourceError
from posttrain.tasks.terminal_gen.instruction_spec import Spec
from posttrain.tasks.terminal_gen.layout import Layout, choose_layout
from posttrain.tasks.terminal_gen.wording import WORDINGS, check_wording, render

DIFFICULTIES = (1, 2, 3)
# the reference solution's length per difficulty: one command, a short pipeline, a few steps
MAX_STEPS = {1: 1, 2: 2, 3: 4}


@dataclass(frozen=True)
class TaskParts:
    """What a template's builder returns for one instance; `files` are paths under the root."""

    instruction: Spec
    files: dict[str, str]
    tests: str
    steps: list[str]
    setup: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class Template:
    """One operation of a family at one difficulty; `slug` is unique within its cell."""

    slug: str
    summary: str  # what it asks for, in a few words
    build: Callable[[random.Random, Layout], TaskParts]
    uses: tuple[str, ...] = ()  # the template ids a composite chains (families/composite.py)


@dataclass(frozen=True)
class GeneratedTask:
    family: str
    difficulty: int
    seed: int
    name: str  # directory name, e.g. "text-processing-d1-grep-level-s17"
    instruction: str
    files: dict[str, str]  # environment files (path relative to root) -> content
    tests: str  # content of tests/test_outputs.py
    steps: list[str]  # reference solution, one bash command per tool call
    setup: list[str]  # extra Dockerfile RUN lines (may be empty)
    template: str = ""  # e.g. "text-processing/d1/grep-level"
    wording: str = "terse"
    root: str = "/app"  # where the files live; the sandbox's working directory

    def content_digest(self) -> str:
        """Identity of what the agent faces and what is checked: equal digests, the same task."""
        payload = [self.instruction, self.files, self.tests, self.setup, self.root]
        return hashlib.sha256(json.dumps(payload, sort_keys=True).encode()).hexdigest()[:24]


def template_id(family: str, difficulty: int, slug: str) -> str:
    return f"{family}/d{difficulty}/{slug}"


@dataclass(frozen=True)
class Family:
    name: str
    skill: str
    templates: dict[int, tuple[Template, ...]]  # difficulty -> its templates; the first is the original
    max_steps: dict[int, int] = field(default_factory=lambda: dict(MAX_STEPS))  # the solution's length cap

    @property
    def levels(self) -> tuple[str, ...]:
        """What each difficulty asks for (its first template's summary)."""
        return tuple(self.templates[d][0].summary for d in DIFFICULTIES)

    def template_ids(self, difficulty: int | None = None) -> list[str]:
        levels = DIFFICULTIES if difficulty is None else (difficulty,)
        return [template_id(self.name, d, t.slug) for d in levels for t in self.templates[d]]

    def generate(
        self,
        difficulty: int,
        rng_or_seed: random.Random | int,
        template: str | None = None,
        wording: str | None = None,
        root: str | None = None,
    ) -> GeneratedTask:
        """One instance; `template` (an id or a slug of this cell), `wording` and `root` pin
        those axes, which the seed picks otherwise (each axis independently of the others)."""
        if difficulty not in DIFFICULTIES:
            raise TaskSourceError(f"terminal-gen: difficulty {difficulty!r} is not one of 1, 2, 3")
        seed = rng_or_seed if isinstance(rng_or_seed, int) else rng_or_seed.randrange(2**31)
        cell = self.templates[difficulty]
        axes = random.Random(f"{self.name}:{difficulty}:{seed}:axes")
        index, drawn_wording, layout = axes.randrange(len(cell)), axes.choice(WORDINGS), choose_layout(axes, root)
        if template is not None:
            index = self._index(difficulty, template)
        if wording is not None:
            check_wording(wording)
        chosen, wording = cell[index], wording or drawn_wording
        # the first template keeps the generator its instances always had, so their data stays
        data_rng = random.Random(
            f"{self.name}:{difficulty}:{seed}" if index == 0 else f"{self.name}:{difficulty}:{chosen.slug}:{seed}"
        )
        parts = chosen.build(data_rng, layout)
        longest = self.max_steps[difficulty]
        if not 1 <= len(parts.steps) <= longest or any("\n" in s for s in parts.steps + parts.setup):
            raise AssertionError(
                f"{self.name} d{difficulty} {chosen.slug}: the solution must be 1..{longest} one-line "
                "steps, and each setup command one line"
            )
        text = render(
            parts.instruction,
            wording,
            random.Random(f"{self.name}:{difficulty}:{seed}:{wording}"),
            workdir=layout.root if layout.relative else None,
        )
        return GeneratedTask(
            family=self.name,
            difficulty=difficulty,
            seed=seed,
            name=f"{self.name}-d{difficulty}-{chosen.slug}-s{seed}",
            instruction=text,
            files=dict(parts.files),
            tests=parts.tests,
            steps=list(parts.steps),
            setup=list(parts.setup),
            template=template_id(self.name, difficulty, chosen.slug),
            wording=wording,
            root=layout.root,
        )

    def _index(self, difficulty: int, template: str) -> int:
        slugs = [t.slug for t in self.templates[difficulty]]
        slug = template.rsplit("/", 1)[-1]
        if template not in (slug, template_id(self.name, difficulty, slug)) or slug not in slugs:
            raise TaskSourceError(
                f"terminal-gen: unknown template {template!r} for {self.name} difficulty {difficulty}; "
                f"known: {', '.join(self.template_ids(difficulty))}"
            )
        return slugs.index(slug)
