"""Fix a small bug in a Python or shell script; the tests run it on data of their own."""

from __future__ import annotations

import random

from posttrain.tasks.terminal_gen.generated_task import Family, TaskParts, Template
from posttrain.tasks.terminal_gen.instruction_spec import Spec
from posttrain.tasks.terminal_gen.layout import Layout
from posttrain.tasks.terminal_gen.verifier_tests import VerifierTests
from posttrain.tasks.terminal_gen.vocabulary import stem, words

SUM_PY = """import sys

nums = [int(line) for line in open(sys.argv[1]) if line.strip()]
print(sum(nums[1:]))
"""
WORDS_SH = """#!/bin/bash
# prints the number of words in the file given as $1
wc -l < "$1"
"""
PEAK_PY = """import sys

values = [float(line) for line in open(sys.argv[1]) if line.strip()]
print(int(min(values)))
"""


def _numbers(rng: random.Random) -> list[int]:
    return [rng.randint(-50, 500) for _ in range(rng.randint(6, 12))]


def _probe(rng: random.Random) -> tuple[list[int], str]:
    """The tests' own input: a fixed printed value cannot pass."""
    probe = _numbers(rng)
    return probe, "".join(f"{n}\n" for n in probe)


def off_by_one(rng: random.Random, layout: Layout) -> TaskParts:
    probe, probe_text = _probe(rng)
    script = f"{stem(rng)}.py"
    checks = VerifierTests()
    checks.add(
        "sums_every_number",
        f"""
        Path('/tmp/probe_numbers.txt').write_text({probe_text!r})
        assert run('python3', {layout.path(script)!r}, '/tmp/probe_numbers.txt').stdout.strip() == {str(sum(probe))!r}
        """,
    )
    return TaskParts(
        instruction=Spec(
            goal="fix the script",
            inputs=[
                f"`python3 {layout.show(script)} FILE` should print the sum of the integers in FILE (one per line), "
                "but it skips the first number"
            ],
        ),
        files={script: SUM_PY},
        tests=checks.render(),
        steps=[f"sed -i 's/nums\\[1:\\]/nums/' {layout.sh(script)}"],
    )


def word_count(rng: random.Random, layout: Layout) -> TaskParts:
    probe, probe_text = _probe(rng)
    script, name = f"{stem(rng)}.sh", stem(rng)
    data = f"{layout.folder('data', 'text files')}/{name}.txt"
    text = " ".join(words(rng, 4)) + "\n" + " ".join(words(rng, 3)) + "\n" + " ".join(words(rng, 5)) + "\n"
    probe_words = " ".join(words(rng, 7)) + "\n" + " ".join(words(rng, 2)) + "\n"
    checks = VerifierTests()
    checks.unchanged(layout.path(data), text)
    checks.value(layout.path("word_count.txt"), str(len(text.split())))
    checks.add(
        "counts_words",
        f"""
        Path('/tmp/probe words.txt').write_text({probe_words!r})
        counted = run('bash', {layout.path(script)!r}, '/tmp/probe words.txt').stdout.strip()
        assert counted == {str(len(probe_words.split()))!r}
        """,
    )
    return TaskParts(
        instruction=Spec(
            goal=f"fix it, then write its output for {layout.show(data)} to {layout.show('word_count.txt')}",
            inputs=[
                f"`bash {layout.show(script)} FILE` should print the number of words in FILE but prints the number "
                "of lines"
            ],
        ),
        files={script: WORDS_SH, data: text},
        tests=checks.render(),
        steps=[
            f"sed -i 's/wc -l/wc -w/' {layout.sh(script)}",
            f"bash {layout.sh(script)} {layout.sh(data)} > {layout.sh('word_count.txt')}",
        ],
    )


def peak(rng: random.Random, layout: Layout) -> TaskParts:
    probe, probe_text = _probe(rng)
    script, readings = f"{stem(rng)}.py", _numbers(rng)
    data = f"{layout.folder('data', 'sensor data')}/readings.txt"
    text = "".join(f"{n}\n" for n in readings)
    checks = VerifierTests()
    checks.unchanged(layout.path(data), text)
    checks.value(layout.path("results/peak.txt"), str(max(readings)))
    checks.add(
        "prints_maximum",
        f"""
        Path('/tmp/probe_readings.txt').write_text({probe_text!r})
        assert run('python3', {layout.path(script)!r}, '/tmp/probe_readings.txt').stdout.strip() == {str(max(probe))!r}
        """,
    )
    return TaskParts(
        instruction=Spec(
            goal=f"fix it, then save its output for {layout.show(data)} as {layout.show('results/peak.txt')}",
            inputs=[
                f"`python3 {layout.show(script)} FILE` should print the largest value in FILE but prints the smallest"
            ],
            notes=["The results folder does not exist yet."],
        ),
        files={script: PEAK_PY, data: text},
        tests=checks.render(),
        steps=[
            f"sed -i 's/min(/max(/' {layout.sh(script)}",
            f"mkdir -p {layout.sh('results')}",
            f"python3 {layout.sh(script)} {layout.sh(data)} > {layout.sh('results/peak.txt')}",
        ],
    )


FAMILY = Family(
    name="script-fix",
    skill="find and fix a one-line bug in a Python or shell script",
    templates={
        1: (Template("off-by-one", "fix an off-by-one slice", off_by_one),),
        2: (Template("word-count", "fix a shell script, then run it into a file", word_count),),
        3: (Template("peak", "fix a Python script, then save its output in a folder that does not exist", peak),),
    },
)
