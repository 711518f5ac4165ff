"""Write a small bash script to a spec; the tests run it on inputs of their own."""

from __future__ import annotations

import random

from posttrain.tasks.terminal_gen.generated_task import Family, TaskParts
from posttrain.tasks.terminal_gen.verifier_tests import VerifierTests
from posttrain.tasks.terminal_gen.vocabulary import people, words

# what the script does to the file named by its argument: (spec, bash body, Python of the result)
TRANSFORMS = {
    "upper": ("prints the file in upper case", 'tr a-z A-Z < "$1"', lambda text: text.upper()),
    "reverse": (
        "prints the file's lines in reverse order",
        'tac "$1"',
        lambda text: "".join(reversed(text.splitlines(True))),
    ),
    "firstword": (
        "prints the first word of each line",
        "awk '{print $1}' \"$1\"",
        lambda text: "".join(line.split()[0] + "\n" for line in text.splitlines()),
    ),
}


def _probe_text(rng: random.Random) -> str:
    return "".join(" ".join(words(rng, rng.randint(2, 4))) + "\n" for _ in range(rng.randint(3, 5)))


def build(difficulty: int, rng: random.Random) -> TaskParts:
    checks = VerifierTests()
    if difficulty == 1:
        greeting = rng.choice(("Hello", "Welcome", "Hi", "Greetings"))
        script = f"/app/{greeting.lower()}.sh"
        for name in people(rng, 2):
            checks.add(
                "greets",
                f"assert run('bash', {script!r}, {name!r}).stdout == {greeting + ', ' + name + '!' + chr(10)!r}",
            )
        return TaskParts(
            instruction=f"Write a bash script {script} so that `bash {script} NAME` prints `{greeting}, NAME!` "
            "(for example for NAME=sam).",
            files={},
            tests=checks.render(),
            steps=[f"echo 'echo \"{greeting}, $1!\"' > {script}"],
        )
    kind = rng.choice(sorted(TRANSFORMS))
    spec, body, expected = TRANSFORMS[kind]
    probe = _probe_text(rng)
    name = rng.choice(words(rng, 1))
    if difficulty == 2:
        script = f"/app/{name}"
        checks.add(
            "runs_directly",
            f"""
            Path('/tmp/probe.txt').write_text({probe!r})
            assert run({script!r}, '/tmp/probe.txt').stdout == {expected(probe)!r}
            """,
        )
        return TaskParts(
            instruction=f"Write an executable bash script {script} that, given a file as its only argument, {spec}.",
            files={},
            tests=checks.render(),
            steps=[f"printf '%s\\n' '#!/bin/bash' {_quoted(body)} > {script}", f"chmod +x {script}"],
        )
    # the folder is missing, and the tests pass a path with a space: "$1" must be quoted
    script = f"/app/bin/{name}"
    checks.add(
        "handles_spaces",
        f"""
        Path('/tmp/probe dir').mkdir(exist_ok=True)
        Path('/tmp/probe dir/in put.txt').write_text({probe!r})
        assert run({script!r}, '/tmp/probe dir/in put.txt').stdout == {expected(probe)!r}
        """,
    )
    return TaskParts(
        instruction=f"Create an executable bash script {script} (/app/bin does not exist yet) that, given a file as "
        f"its only argument, {spec}. File names may contain spaces.",
        files={},
        tests=checks.render(),
        steps=["mkdir -p /app/bin", f"printf '%s\\n' '#!/bin/bash' {_quoted(body)} > {script}", f"chmod +x {script}"],
    )


def _quoted(text: str) -> str:
    return "'" + text.replace("'", "'\\''") + "'"


FAMILY = Family(
    name="script-write",
    skill="write a small bash script to a spec",
    levels=(
        "a one-line greeting script",
        "an executable script over a file argument",
        "the same in a folder that does not exist, for file names with spaces",
    ),
    build=build,
)
