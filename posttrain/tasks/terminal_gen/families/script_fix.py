"""Fix a small bug in a Python or shell script; the tests run it on data of their own."""

from __future__ import annotations

import random

from posttrain.tasks.terminal_gen.generated_task import Family, TaskParts
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


def build(difficulty: int, rng: random.Random) -> TaskParts:
    checks = VerifierTests()
    probe = _numbers(rng)  # the tests' own input: a fixed printed value cannot pass
    probe_text = "".join(f"{n}\n" for n in probe)
    if difficulty == 1:
        script = f"/app/{stem(rng)}.py"
        checks.add(
            "sums_every_number",
            f"""
            Path('/tmp/probe_numbers.txt').write_text({probe_text!r})
            assert run('python3', {script!r}, '/tmp/probe_numbers.txt').stdout.strip() == {str(sum(probe))!r}
            """,
        )
        return TaskParts(
            instruction=f"`python3 {script} FILE` should print the sum of the integers in FILE (one per line), "
            "but it skips the first number. Fix the script.",
            files={script.removeprefix("/app/"): SUM_PY},
            tests=checks.render(),
            steps=[f"sed -i 's/nums\\[1:\\]/nums/' {script}"],
        )
    if difficulty == 2:
        script, name = f"/app/{stem(rng)}.sh", stem(rng)
        text = " ".join(words(rng, 4)) + "\n" + " ".join(words(rng, 3)) + "\n" + " ".join(words(rng, 5)) + "\n"
        probe_words = " ".join(words(rng, 7)) + "\n" + " ".join(words(rng, 2)) + "\n"
        checks.unchanged(f"/app/data/{name}.txt", text)
        checks.value("/app/word_count.txt", str(len(text.split())))
        checks.add(
            "counts_words",
            f"""
            Path('/tmp/probe words.txt').write_text({probe_words!r})
            assert run('bash', {script!r}, '/tmp/probe words.txt').stdout.strip() == {str(len(probe_words.split()))!r}
            """,
        )
        return TaskParts(
            instruction=f"`bash {script} FILE` should print the number of words in FILE but prints the number of "
            f"lines. Fix it, then write its output for /app/data/{name}.txt to /app/word_count.txt.",
            files={script.removeprefix("/app/"): WORDS_SH, f"data/{name}.txt": text},
            tests=checks.render(),
            steps=[f"sed -i 's/wc -l/wc -w/' {script}", f"bash {script} /app/data/{name}.txt > /app/word_count.txt"],
        )
    script, readings = f"/app/{stem(rng)}.py", _numbers(rng)
    text = "".join(f"{n}\n" for n in readings)
    checks.unchanged("/app/data/readings.txt", text)
    checks.value("/app/results/peak.txt", str(max(readings)))
    checks.add(
        "prints_maximum",
        f"""
        Path('/tmp/probe_readings.txt').write_text({probe_text!r})
        assert run('python3', {script!r}, '/tmp/probe_readings.txt').stdout.strip() == {str(max(probe))!r}
        """,
    )
    return TaskParts(
        instruction=f"`python3 {script} FILE` should print the largest value in FILE but prints the smallest. Fix it, "
        "then save its output for /app/data/readings.txt as /app/results/peak.txt (the folder does not exist yet).",
        files={script.removeprefix("/app/"): PEAK_PY, "data/readings.txt": text},
        tests=checks.render(),
        steps=[
            f"sed -i 's/min(/max(/' {script}",
            "mkdir -p /app/results",
            f"python3 {script} /app/data/readings.txt > /app/results/peak.txt",
        ],
    )


FAMILY = Family(
    name="script-fix",
    skill="find and fix a one-line bug in a Python or shell script",
    levels=(
        "fix an off-by-one slice",
        "fix a shell script, then run it into a file",
        "fix a Python script, then save its output in a folder that does not exist",
    ),
    build=build,
)
