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


PRODUCT_PY = """import sys

a, b = int(sys.argv[1]), int(sys.argv[2])
print(a + b)  # should be the product
"""
FIELD_SH = """#!/bin/bash
# prints the second comma-separated field of each line of $1
cut -d' ' -f2 "$1"
"""
SORTED_SH = """#!/bin/bash
# prints the lines of $1 sorted
sortt "$1"
"""
UPPER_PY = """import sys

for line in open(sys.argv[1]):
    print(line.rstrip("\\n").lower())
"""
BROKEN_SHEBANG = """#!/bin/bsh
echo "$(wc -l < "$1") lines"
"""
ASCENDING_PY = """import sys

values = [int(line) for line in open(sys.argv[1]) if line.strip()]
for value in sorted(values, reverse=True):
    print(value)
"""
MEAN_PY = """import sys

values = [int(line) for line in open(sys.argv[1]) if line.strip()]
print(f"{sum(values) // len(values):.2f}")
"""
LINES_SH = """#!/bin/bash
# prints the number of lines of the file given as $1
wc -l < $1
"""
AMOUNT_PY = """import sys

rows = open(sys.argv[1]).read().splitlines()
print(sum(int(row.split(",")[2]) for row in rows[0:]))
"""


def _check_output(checks: VerifierTests, name: str, command: list[str], probe: dict[str, str], expected: str) -> None:
    """A test that writes the probe files, runs `command` and compares its stripped output."""
    writes = "".join(
        f"Path({path!r}).parent.mkdir(parents=True, exist_ok=True)\nPath({path!r}).write_text({text!r})\n"
        for path, text in probe.items()
    )
    checks.add(name, f"{writes}assert run(*{command!r}).stdout.strip() == {expected!r}")


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


def wrong_operator(rng: random.Random, layout: Layout) -> TaskParts:
    script = f"{stem(rng)}.py"
    checks = VerifierTests()
    for a, b in ((rng.randint(2, 30), rng.randint(2, 30)), (rng.randint(31, 99), 0)):
        _check_output(checks, "multiplies", ["python3", layout.path(script), str(a), str(b)], {}, str(a * b))
    return TaskParts(
        instruction=Spec(
            goal="fix the script",
            inputs=[
                f"`python3 {layout.show(script)} A B` should print the product of the integers A and B, but it "
                "prints their sum"
            ],
        ),
        files={script: PRODUCT_PY},
        tests=checks.render(),
        steps=[f"sed -i 's/a + b/a * b/' {layout.sh(script)}"],
    )


def wrong_separator(rng: random.Random, layout: Layout) -> TaskParts:
    script = f"{stem(rng)}.sh"
    rows = [f"{a},{b},{rng.randint(1, 9)}" for a, b in zip(words(rng, 4), words(rng, 4))]
    checks = VerifierTests()
    probe = {"/tmp/probe.csv": "".join(r + "\n" for r in rows)}
    _check_output(
        checks,
        "second_field",
        ["bash", layout.path(script), "/tmp/probe.csv"],
        probe,
        "\n".join(r.split(",")[1] for r in rows),
    )
    return TaskParts(
        instruction=Spec(
            goal="fix the script",
            inputs=[
                f"`bash {layout.show(script)} FILE` should print the second comma-separated field of each line "
                "of FILE, but it splits on spaces"
            ],
        ),
        files={script: FIELD_SH},
        tests=checks.render(),
        steps=[f"sed -i \"s/-d' '/-d,/\" {layout.sh(script)}"],
    )


def command_typo(rng: random.Random, layout: Layout) -> TaskParts:
    script = f"{stem(rng)}.sh"
    lines = words(rng, 6)
    checks = VerifierTests()
    probe = {"/tmp/probe.txt": "".join(w + "\n" for w in lines)}
    _check_output(checks, "sorts", ["bash", layout.path(script), "/tmp/probe.txt"], probe, "\n".join(sorted(lines)))
    return TaskParts(
        instruction=Spec(
            goal="fix the script so that it works",
            inputs=[
                f"`bash {layout.show(script)} FILE` should print the lines of FILE sorted, but it fails with "
                "'command not found'"
            ],
        ),
        files={script: SORTED_SH},
        tests=checks.render(),
        steps=[f"sed -i 's/sortt/sort/' {layout.sh(script)}"],
    )


def upper_case(rng: random.Random, layout: Layout) -> TaskParts:
    script, name = f"{stem(rng)}.py", stem(rng)
    data = f"{layout.folder('data', 'text files')}/{name}.txt"
    text = "".join(" ".join(words(rng, 3)).capitalize() + "\n" for _ in range(4))
    probe_words = words(rng, 5)
    checks = VerifierTests()
    checks.unchanged(layout.path(data), text)
    checks.lines(layout.path("upper.txt"), text.upper().splitlines())
    probe = {"/tmp/probe.txt": " ".join(probe_words) + "\n"}
    _check_output(
        checks, "upper", ["python3", layout.path(script), "/tmp/probe.txt"], probe, " ".join(probe_words).upper()
    )
    return TaskParts(
        instruction=Spec(
            goal=f"fix it, then write its output for {layout.show(data)} to {layout.show('upper.txt')}",
            inputs=[
                f"`python3 {layout.show(script)} FILE` should print FILE in upper case but prints it in lower case"
            ],
        ),
        files={script: UPPER_PY, data: text},
        tests=checks.render(),
        steps=[
            f"sed -i 's/\\.lower()/.upper()/' {layout.sh(script)}",
            f"python3 {layout.sh(script)} {layout.sh(data)} > {layout.sh('upper.txt')}",
        ],
    )


def broken_shebang(rng: random.Random, layout: Layout) -> TaskParts:
    script = f"{layout.folder('bin', 'my tools')}/{rng.choice(words(rng, 1))}"
    n = rng.randint(2, 9)
    checks = VerifierTests()
    probe = {"/tmp/probe.txt": "line\n" * n}
    _check_output(checks, "runs_directly", [layout.path(script), "/tmp/probe.txt"], probe, f"{n} lines")
    return TaskParts(
        instruction=Spec(
            goal=f"make {layout.show(script)} run directly, as `{layout.show(script)} FILE`",
            inputs=[
                f"{layout.show(script)} should print the number of lines of FILE followed by ' lines', but its "
                "first line names a shell that does not exist and it cannot be run directly"
            ],
            notes=["Keep the script's body as it is."],
        ),
        files={script: BROKEN_SHEBANG},
        tests=checks.render(),
        steps=[f"sed -i '1s|.*|#!/bin/bash|' {layout.sh(script)}", f"chmod +x {layout.sh(script)}"],
    )


def ascending(rng: random.Random, layout: Layout) -> TaskParts:
    script = f"{stem(rng)}.py"
    data = f"{layout.folder('data', 'raw numbers')}/numbers.txt"
    numbers, probe = _numbers(rng), _numbers(rng)
    text = "".join(f"{n}\n" for n in numbers)
    checks = VerifierTests()
    checks.unchanged(layout.path(data), text)
    checks.lines(layout.path("sorted.txt"), [str(n) for n in sorted(numbers)])
    probe_files = {"/tmp/probe_numbers.txt": "".join(f"{n}\n" for n in probe)}
    command = ["python3", layout.path(script), "/tmp/probe_numbers.txt"]
    _check_output(checks, "ascending", command, probe_files, "\n".join(str(n) for n in sorted(probe)))
    return TaskParts(
        instruction=Spec(
            goal=f"fix it, then save its output for {layout.show(data)} as {layout.show('sorted.txt')}",
            inputs=[
                f"`python3 {layout.show(script)} FILE` should print the integers of FILE in ascending order but "
                "prints them in descending order"
            ],
        ),
        files={script: ASCENDING_PY, data: text},
        tests=checks.render(),
        steps=[
            f"sed -i 's/, reverse=True//' {layout.sh(script)}",
            f"python3 {layout.sh(script)} {layout.sh(data)} > {layout.sh('sorted.txt')}",
        ],
    )


def integer_mean(rng: random.Random, layout: Layout) -> TaskParts:
    script = f"{stem(rng)}.py"
    data = f"{layout.folder('data', 'sensor data')}/values.txt"
    numbers, probe = _numbers(rng), _numbers(rng)
    while sum(probe) % len(probe) == 0:  # a whole mean would pass the broken script too
        probe.append(rng.randint(1, 9))
    text = "".join(f"{n}\n" for n in numbers)
    checks = VerifierTests()
    checks.unchanged(layout.path(data), text)
    checks.value(layout.path("results/mean.txt"), f"{sum(numbers) / len(numbers):.2f}")
    probe_files = {"/tmp/probe_values.txt": "".join(f"{n}\n" for n in probe)}
    command = ["python3", layout.path(script), "/tmp/probe_values.txt"]
    _check_output(checks, "exact_mean", command, probe_files, f"{sum(probe) / len(probe):.2f}")
    return TaskParts(
        instruction=Spec(
            goal=f"fix it, then save its output for {layout.show(data)} as {layout.show('results/mean.txt')}",
            inputs=[
                f"`python3 {layout.show(script)} FILE` should print the mean of the integers in FILE with two "
                "decimals, but it rounds the mean down to a whole number first"
            ],
            notes=["The results folder does not exist yet."],
        ),
        files={script: MEAN_PY, data: text},
        tests=checks.render(),
        steps=[
            f"sed -i 's|//|/|' {layout.sh(script)}",
            f"mkdir -p {layout.sh('results')}",
            f"python3 {layout.sh(script)} {layout.sh(data)} > {layout.sh('results/mean.txt')}",
        ],
    )


def unquoted_argument(rng: random.Random, layout: Layout) -> TaskParts:
    script = f"{stem(rng)}.sh"
    data = f"{layout.folder('notes', 'meeting notes')}/{rng.choice(words(rng, 1))} minutes.txt"
    text = "".join(" ".join(words(rng, 3)) + "\n" for _ in range(rng.randint(3, 9)))
    n = rng.randint(2, 12)
    checks = VerifierTests()
    checks.unchanged(layout.path(data), text)
    checks.value(layout.path("line_count.txt"), str(len(text.splitlines())))
    probe = {"/tmp/probe dir/some file.txt": "x\n" * n}
    _check_output(checks, "quoted", ["bash", layout.path(script), "/tmp/probe dir/some file.txt"], probe, str(n))
    return TaskParts(
        instruction=Spec(
            goal=f"fix it, then write its output for {layout.show(data)} to {layout.show('line_count.txt')}",
            inputs=[
                f"`bash {layout.show(script)} FILE` should print the number of lines of FILE, but it fails when "
                "the file's path contains a space"
            ],
        ),
        files={script: LINES_SH, data: text},
        tests=checks.render(),
        steps=[
            f"sed -i 's/< \\$1/< \"$1\"/' {layout.sh(script)}",
            f"bash {layout.sh(script)} {layout.sh(data)} > {layout.sh('line_count.txt')}",
        ],
    )


def header_row(rng: random.Random, layout: Layout) -> TaskParts:
    script = f"{stem(rng)}.py"
    data = f"{layout.folder('data', 'sales data')}/sales.csv"
    rows = [(i + 1, rng.choice(words(rng, 3)), rng.randint(5, 500)) for i in range(rng.randint(5, 10))]
    text = "id,item,amount\n" + "".join(f"{i},{w},{a}\n" for i, w, a in rows)
    probe_rows = [(i + 1, "x", rng.randint(5, 500)) for i in range(4)]
    checks = VerifierTests()
    checks.unchanged(layout.path(data), text)
    checks.value(layout.path("report/total.txt"), str(sum(a for _, _, a in rows)))
    probe = {"/tmp/probe_sales.csv": "id,item,amount\n" + "".join(f"{i},{w},{a}\n" for i, w, a in probe_rows)}
    command = ["python3", layout.path(script), "/tmp/probe_sales.csv"]
    _check_output(checks, "skips_header", command, probe, str(sum(a for _, _, a in probe_rows)))
    return TaskParts(
        instruction=Spec(
            goal=f"fix it, then save its output for {layout.show(data)} as {layout.show('report/total.txt')}",
            inputs=[
                f"`python3 {layout.show(script)} FILE` should print the sum of the amount column of the CSV "
                "FILE (header line id,item,amount), but it fails on the header line"
            ],
            notes=[f"{layout.show('report')} does not exist yet."],
        ),
        files={script: AMOUNT_PY, data: text},
        tests=checks.render(),
        steps=[
            f"sed -i 's/rows\\[0:\\]/rows[1:]/' {layout.sh(script)}",
            f"mkdir -p {layout.sh('report')}",
            f"python3 {layout.sh(script)} {layout.sh(data)} > {layout.sh('report/total.txt')}",
        ],
    )


FAMILY = Family(
    name="script-fix",
    skill="find and fix a one-line bug in a Python or shell script",
    templates={
        1: (
            Template("off-by-one", "fix an off-by-one slice", off_by_one),
            Template("wrong-operator", "fix a wrong operator", wrong_operator),
            Template("wrong-separator", "fix a field separator", wrong_separator),
            Template("command-typo", "fix a misspelt command", command_typo),
        ),
        2: (
            Template("word-count", "fix a shell script, then run it into a file", word_count),
            Template("upper-case", "fix a Python script, then run it into a file", upper_case),
            Template("broken-shebang", "fix a shebang and make a script executable", broken_shebang),
            Template("ascending", "fix a sort order, then run it into a file", ascending),
        ),
        3: (
            Template("peak", "fix a Python script, then save its output in a folder that does not exist", peak),
            Template("integer-mean", "fix an integer division, then save into a new folder", integer_mean),
            Template("unquoted-argument", "quote an argument, then run on a path with a space", unquoted_argument),
            Template("header-row", "skip a CSV header, then save into a new folder", header_row),
        ),
    },
)
