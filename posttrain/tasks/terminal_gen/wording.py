"""The wording axis: one `Spec` rendered as text in one of several styles, with synonyms
varied by a seeded generator. Every style carries every part of the spec (the goal, each input
sentence, the output form, each note, the working directory when stated); only the framing,
the order and the words around them change.

    render(spec, "bullets", random.Random(3), workdir="/opt/work")
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable

from posttrain.errors import TaskSourceError
from posttrain.tasks.terminal_gen.instruction_spec import Spec
from posttrain.tasks.terminal_gen.vocabulary import PEOPLE

# whole words (outside paths and quotes) and the words that may stand in for them
SYNONYMS = {
    "directory": ("directory", "folder"),
    "write the": ("write the", "save the"),  # not "write" alone: "write permission", "write a script"
    "create": ("create", "make"),
    "every": ("every", "each"),
    "delete": ("delete", "remove"),
    "sorted alphabetically": ("sorted alphabetically", "in alphabetical order"),
    "one per line": ("one per line", "one on each line"),
    "the number of": ("the number of", "the count of"),
    "exactly": ("exactly", "precisely"),
}
_SYNONYM = re.compile(
    r"(?<![\w/.-])(" + "|".join(sorted(map(re.escape, SYNONYMS), key=len, reverse=True)) + r")(?![\w/-])",
    re.IGNORECASE,
)
_QUOTED = re.compile(r"('[^']*')")

ROLES = (
    "a data analyst on the team",
    "the sysadmin on call this week",
    "a researcher tidying up a project",
    "a developer who just joined",
    "the release manager",
    "a support engineer",
)


def _vary(text: str, rng: random.Random) -> str:
    """Synonyms for the words of SYNONYMS, leaving paths and quoted spans as they are."""

    def swap(match: re.Match) -> str:
        word = match.group(1)
        choice = rng.choice(SYNONYMS[word.lower()])
        return choice[0].upper() + choice[1:] if word[0].isupper() else choice

    return "".join(part if _QUOTED.fullmatch(part) else _SYNONYM.sub(swap, part) for part in _QUOTED.split(text))


def _cap(text: str) -> str:
    return text[:1].upper() + text[1:]


def _sentence(text: str) -> str:
    text = text.strip()
    return text if text.endswith((".", "?", "!", ":")) else text + "."


def _workdir_sentence(workdir: str, rng: random.Random) -> str:
    return rng.choice(
        (
            f"Your working directory is {workdir}; the paths here are relative to it.",
            f"You are in {workdir}, and relative paths below start there.",
            f"Work in {workdir} (every relative path here is under it).",
        )
    )


def _terse(spec: Spec, rng: random.Random, context: list[str]) -> str:
    head = _cap(spec.goal) + (f" ({spec.output})" if spec.output else "") + "."
    return " ".join([head, *context, *(_sentence(n) for n in spec.notes)])


def _verbose(spec: Spec, rng: random.Random, context: list[str]) -> str:
    opening = rng.choice(("Here is a task for you.", "There is some work to do in this environment.", "Hello!"))
    parts = [opening, *context, f"What needs doing: {spec.goal}."]
    if spec.output:
        parts.append(f"{rng.choice(('The result should be', 'Make the output', 'Produce'))} {spec.output}.")
    if spec.notes:
        parts.append(rng.choice(("Keep in mind:", "Please note:", "A few rules:")))
        parts += [_sentence(n) for n in spec.notes]
    parts.append(rng.choice(("Check the result before you finish.", "Make sure it is right before you stop.")))
    return " ".join(parts)


def _story(spec: Spec, rng: random.Random, context: list[str]) -> str:
    name = rng.choice(PEOPLE).capitalize()
    parts = [f"Hi, {name} here, {rng.choice(ROLES)}.", *context]
    parts.append(f"{rng.choice(('Could you', 'Can you please', 'Would you'))} {spec.goal}?")
    if spec.output:
        parts.append(f"{rng.choice(('I need it as', 'I would like it as', 'Give me'))} {spec.output}.")
    parts += [_sentence(n) for n in spec.notes]
    parts.append(rng.choice(("Thanks!", "Thank you.", "Much appreciated.")))
    return " ".join(parts)


def _bullets(spec: Spec, rng: random.Random, context: list[str]) -> str:
    task, given, result, rules = rng.choice(
        (("Task", "Inputs", "Output", "Notes"), ("Goal", "Given", "Result", "Constraints"))
    )
    lines = [f"{task}: {_cap(spec.goal)}."]
    if context:
        lines += ["", f"{given}:", *(f"- {c}" for c in context)]
    if spec.output:
        lines += ["", f"{result}: {spec.output}."]
    if spec.notes:
        lines += ["", f"{rules}:", *(f"- {_sentence(n)}" for n in spec.notes)]
    return "\n".join(lines)


def _goal_first(spec: Spec, rng: random.Random, context: list[str]) -> str:
    lead = rng.choice(("Task: ", "Please ", "Your task: "))
    goal = (spec.goal if lead == "Please " else _cap(spec.goal)) + "."
    parts = [lead + goal, *context]
    if spec.output:
        parts.append(f"{rng.choice(('Format:', 'Output:', 'Write it as'))} {spec.output}.")
    return " ".join(parts + [_sentence(n) for n in spec.notes])


def _details_first(spec: Spec, rng: random.Random, context: list[str]) -> str:
    leads = ("With that in mind,", "Given that,", "Now:") if context else ("The job:", "One thing to do:")
    lead = rng.choice(leads)
    goal = spec.goal if lead.endswith(",") else _cap(spec.goal)
    tail = f", as {spec.output}" if spec.output else ""
    return " ".join([*context, f"{lead} {goal}{tail}.", *(_sentence(n) for n in spec.notes)])


RENDERERS: dict[str, Callable[[Spec, random.Random, list[str]], str]] = {
    "terse": _terse,
    "verbose": _verbose,
    "story": _story,
    "bullets": _bullets,
    "goal-first": _goal_first,
    "details-first": _details_first,
}
WORDINGS = tuple(RENDERERS)


def check_wording(wording: str, where: str = "terminal-gen") -> None:
    if wording not in RENDERERS:
        raise TaskSourceError(f"{where}: unknown wording {wording!r}; known: {', '.join(WORDINGS)}")


def render(spec: Spec, wording: str, rng: random.Random, workdir: str | None = None) -> str:
    """The instruction text of `spec` in style `wording`; `workdir`: a working directory the
    text states (its paths are then relative to it)."""
    check_wording(wording)
    context = ([_workdir_sentence(workdir, rng)] if workdir else []) + [_sentence(i) for i in spec.inputs]
    return _vary(RENDERERS[wording](spec, rng, context), rng).strip()
