"""Write a small bash script to a spec; the tests run it on inputs of their own."""

from __future__ import annotations

import random

from posttrain.tasks.terminal_gen.generated_task import Family, TaskParts, Template
from posttrain.tasks.terminal_gen.instruction_spec import Spec
from posttrain.tasks.terminal_gen.layout import Layout
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


def greeting(rng: random.Random, layout: Layout) -> TaskParts:
    word = rng.choice(("Hello", "Welcome", "Hi", "Greetings"))
    script = f"{word.lower()}.sh"
    checks = VerifierTests()
    for name in people(rng, 2):
        checks.add(
            "greets",
            f"assert run('bash', {layout.path(script)!r}, {name!r}).stdout == {word + ', ' + name + '!' + chr(10)!r}",
        )
    return TaskParts(
        instruction=Spec(
            goal=f"write a bash script {layout.show(script)} so that `bash {layout.show(script)} NAME` prints "
            f"`{word}, NAME!` (for example for NAME=sam)"
        ),
        files={},
        tests=checks.render(),
        steps=[f"echo 'echo \"{word}, $1!\"' > {layout.sh(script)}"],
    )


def _transform(rng: random.Random) -> tuple[str, str, str, str, str]:
    """(what the script does, its bash body, a probe input, the expected output, a name)."""
    kind = rng.choice(sorted(TRANSFORMS))
    spec, body, expected = TRANSFORMS[kind]
    probe = _probe_text(rng)
    return spec, body, probe, expected(probe), rng.choice(words(rng, 1))


def file_filter(rng: random.Random, layout: Layout) -> TaskParts:
    spec, body, probe, expected, name = _transform(rng)
    checks = VerifierTests()
    checks.add(
        "runs_directly",
        f"""
        Path('/tmp/probe.txt').write_text({probe!r})
        assert run({layout.path(name)!r}, '/tmp/probe.txt').stdout == {expected!r}
        """,
    )
    return TaskParts(
        instruction=Spec(
            goal=f"write an executable bash script {layout.show(name)} that, given a file as its only argument, {spec}"
        ),
        files={},
        tests=checks.render(),
        steps=[f"printf '%s\\n' '#!/bin/bash' {_quoted(body)} > {layout.sh(name)}", f"chmod +x {layout.sh(name)}"],
    )


def filter_with_spaces(rng: random.Random, layout: Layout) -> TaskParts:
    # the folder is missing, and the tests pass a path with a space: "$1" must be quoted
    spec, body, probe, expected, name = _transform(rng)
    script = f"bin/{name}"
    checks = VerifierTests()
    checks.add(
        "handles_spaces",
        f"""
        Path('/tmp/probe dir').mkdir(exist_ok=True)
        Path('/tmp/probe dir/in put.txt').write_text({probe!r})
        assert run({layout.path(script)!r}, '/tmp/probe dir/in put.txt').stdout == {expected!r}
        """,
    )
    return TaskParts(
        instruction=Spec(
            goal=f"create an executable bash script {layout.show(script)} that, given a file as its only argument, "
            f"{spec}",
            notes=[f"{layout.show('bin')} does not exist yet.", "File names may contain spaces."],
        ),
        files={},
        tests=checks.render(),
        steps=[
            f"mkdir -p {layout.sh('bin')}",
            f"printf '%s\\n' '#!/bin/bash' {_quoted(body)} > {layout.sh(script)}",
            f"chmod +x {layout.sh(script)}",
        ],
    )


def _quoted(text: str) -> str:
    return "'" + text.replace("'", "'\\''") + "'"


FAMILY = Family(
    name="script-write",
    skill="write a small bash script to a spec",
    templates={
        1: (Template("greeting", "a one-line greeting script", greeting),),
        2: (Template("file-filter", "an executable script over a file argument", file_filter),),
        3: (
            Template(
                "filter-with-spaces",
                "the same in a folder that does not exist, for file names with spaces",
                filter_with_spaces,
            ),
        ),
    },
)
