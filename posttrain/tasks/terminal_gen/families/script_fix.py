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


def _fix(layout: Layout, script: str, source: str, bug: str, checks: VerifierTests, sed: str) -> TaskParts:
    """A difficulty-1 template: fix `script` (`bug`: what it should do, and what it does) with one sed."""
    spec = Spec(goal=f"fix the script {layout.show(script)}", inputs=[bug])
    return TaskParts(spec, {script: source}, checks.render(), [f"sed -i {sed} {layout.sh(script)}"])


def _fix_then_run(
    layout: Layout, script: str, source: str, bug: str, data: tuple[str, str], out: str, checks: VerifierTests, sed: str
) -> TaskParts:
    """Fix `script` with one sed, then run it on `data` (path, text) into `out`, whose folder is
    created first when it has one (it does not exist yet)."""
    runner = "python3" if script.endswith(".py") else "bash"
    folder = out.rsplit("/", 1)[0] if "/" in out else ""
    checks.unchanged(layout.path(data[0]), data[1])
    spec = Spec(
        goal=f"fix the script {layout.show(script)}, then write its output for {layout.show(data[0])} to "
        f"{layout.show(out)}",
        inputs=[f"`{runner} {layout.show(script)} FILE` should {bug}"],
        notes=[f"{layout.show(folder)} does not exist yet."] if folder else [],
    )
    steps = [
        f"sed -i {sed} {layout.sh(script)}",
        *([f"mkdir -p {layout.sh(folder)}"] if folder else []),
        f"{runner} {layout.sh(script)} {layout.sh(data[0])} > {layout.sh(out)}",
    ]
    return TaskParts(spec, {script: source, data[0]: data[1]}, checks.render(), steps)


def _lines(values) -> str:
    return "".join(f"{v}\n" for v in values)


def off_by_one(rng: random.Random, layout: Layout) -> TaskParts:
    probe, probe_text = _probe(rng)
    script = f"{stem(rng)}.py"
    checks = VerifierTests()
    command = ["python3", layout.path(script), "/tmp/probe_numbers.txt"]
    _check_output(checks, "sums_every_number", command, {"/tmp/probe_numbers.txt": probe_text}, str(sum(probe)))
    bug = (
        f"`python3 {layout.show(script)} FILE` should print the sum of the integers in FILE (one per line), but "
        "it skips the first number"
    )
    return _fix(layout, script, SUM_PY, bug, checks, "'s/nums\\[1:\\]/nums/'")


def word_count(rng: random.Random, layout: Layout) -> TaskParts:
    probe, probe_text = _probe(rng)
    script, name = f"{stem(rng)}.sh", stem(rng)
    data = f"{layout.folder('data', 'text files')}/{name}.txt"
    text = " ".join(words(rng, 4)) + "\n" + " ".join(words(rng, 3)) + "\n" + " ".join(words(rng, 5)) + "\n"
    probe_words = " ".join(words(rng, 7)) + "\n" + " ".join(words(rng, 2)) + "\n"
    checks = VerifierTests()
    checks.value(layout.path("word_count.txt"), str(len(text.split())))
    command = ["bash", layout.path(script), "/tmp/probe words.txt"]
    _check_output(checks, "counts_words", command, {"/tmp/probe words.txt": probe_words}, str(len(probe_words.split())))
    bug = "print the number of words in FILE but prints the number of lines"
    return _fix_then_run(layout, script, WORDS_SH, bug, (data, text), "word_count.txt", checks, "'s/wc -l/wc -w/'")


def peak(rng: random.Random, layout: Layout) -> TaskParts:
    probe, probe_text = _probe(rng)
    script, readings = f"{stem(rng)}.py", _numbers(rng)
    data = f"{layout.folder('data', 'sensor data')}/readings.txt"
    checks = VerifierTests()
    checks.value(layout.path("results/peak.txt"), str(max(readings)))
    command = ["python3", layout.path(script), "/tmp/probe_readings.txt"]
    _check_output(checks, "prints_maximum", command, {"/tmp/probe_readings.txt": probe_text}, str(max(probe)))
    bug = "print the largest value in FILE but prints the smallest"
    return _fix_then_run(
        layout, script, PEAK_PY, bug, (data, _lines(readings)), "results/peak.txt", checks, "'s/min(/max(/'"
    )


def wrong_operator(rng: random.Random, layout: Layout) -> TaskParts:
    script = f"{stem(rng)}.py"
    checks = VerifierTests()
    for a, b in ((rng.randint(2, 30), rng.randint(2, 30)), (rng.randint(31, 99), 0)):
        _check_output(checks, "multiplies", ["python3", layout.path(script), str(a), str(b)], {}, str(a * b))
    bug = (
        f"`python3 {layout.show(script)} A B` should print the product of the integers A and B, but it prints their sum"
    )
    return _fix(layout, script, PRODUCT_PY, bug, checks, "'s/a + b/a * b/'")


def wrong_separator(rng: random.Random, layout: Layout) -> TaskParts:
    script = f"{stem(rng)}.sh"
    rows = [f"{a},{b},{rng.randint(1, 9)}" for a, b in zip(words(rng, 4), words(rng, 4))]
    checks = VerifierTests()
    expected = "\n".join(r.split(",")[1] for r in rows)
    _check_output(
        checks,
        "second_field",
        ["bash", layout.path(script), "/tmp/probe.csv"],
        {"/tmp/probe.csv": _lines(rows)},
        expected,
    )
    bug = (
        f"`bash {layout.show(script)} FILE` should print the second comma-separated field of each line of FILE, "
        "but it splits on spaces"
    )
    return _fix(layout, script, FIELD_SH, bug, checks, "\"s/-d' '/-d,/\"")


def command_typo(rng: random.Random, layout: Layout) -> TaskParts:
    script = f"{stem(rng)}.sh"
    lines = words(rng, 6)
    checks = VerifierTests()
    _check_output(
        checks,
        "sorts",
        ["bash", layout.path(script), "/tmp/probe.txt"],
        {"/tmp/probe.txt": _lines(lines)},
        "\n".join(sorted(lines)),
    )
    bug = (
        f"`bash {layout.show(script)} FILE` should print the lines of FILE sorted, but it fails with 'command "
        "not found'"
    )
    return _fix(layout, script, SORTED_SH, bug, checks, "'s/sortt/sort/'")


def upper_case(rng: random.Random, layout: Layout) -> TaskParts:
    script, name = f"{stem(rng)}.py", stem(rng)
    data = f"{layout.folder('data', 'text files')}/{name}.txt"
    text = "".join(" ".join(words(rng, 3)).capitalize() + "\n" for _ in range(4))
    probe_words = " ".join(words(rng, 5))
    checks = VerifierTests()
    checks.lines(layout.path("upper.txt"), text.upper().splitlines())
    command = ["python3", layout.path(script), "/tmp/probe.txt"]
    _check_output(checks, "upper", command, {"/tmp/probe.txt": probe_words + "\n"}, probe_words.upper())
    bug = "print FILE in upper case but prints it in lower case"
    return _fix_then_run(layout, script, UPPER_PY, bug, (data, text), "upper.txt", checks, "'s/\\.lower()/.upper()/'")


def broken_shebang(rng: random.Random, layout: Layout) -> TaskParts:
    script = f"{layout.folder('bin', 'my tools')}/{rng.choice(words(rng, 1))}"
    n = rng.randint(2, 9)
    checks = VerifierTests()
    _check_output(
        checks, "runs_directly", [layout.path(script), "/tmp/probe.txt"], {"/tmp/probe.txt": "line\n" * n}, f"{n} lines"
    )
    spec = Spec(
        goal=f"make {layout.show(script)} run directly, as `{layout.show(script)} FILE`",
        inputs=[
            f"{layout.show(script)} should print the number of lines of FILE followed by ' lines', but its first "
            "line names a shell that does not exist and it cannot be run directly"
        ],
        notes=["Keep the script's body as it is."],
    )
    steps = [f"sed -i '1s|.*|#!/bin/bash|' {layout.sh(script)}", f"chmod +x {layout.sh(script)}"]
    return TaskParts(spec, {script: BROKEN_SHEBANG}, checks.render(), steps)


def ascending(rng: random.Random, layout: Layout) -> TaskParts:
    script = f"{stem(rng)}.py"
    data = f"{layout.folder('data', 'raw numbers')}/numbers.txt"
    numbers, probe = _numbers(rng), _numbers(rng)
    checks = VerifierTests()
    checks.lines(layout.path("sorted.txt"), [str(n) for n in sorted(numbers)])
    command = ["python3", layout.path(script), "/tmp/probe_numbers.txt"]
    expected = "\n".join(str(n) for n in sorted(probe))
    _check_output(checks, "ascending", command, {"/tmp/probe_numbers.txt": _lines(probe)}, expected)
    bug = "print the integers of FILE in ascending order but prints them in descending order"
    return _fix_then_run(
        layout, script, ASCENDING_PY, bug, (data, _lines(numbers)), "sorted.txt", checks, "'s/, reverse=True//'"
    )


def integer_mean(rng: random.Random, layout: Layout) -> TaskParts:
    script = f"{stem(rng)}.py"
    data = f"{layout.folder('data', 'sensor data')}/values.txt"
    numbers, probe = _numbers(rng), _numbers(rng)
    while sum(probe) % len(probe) == 0:  # a whole mean would pass the broken script too
        probe.append(rng.randint(1, 9))
    checks = VerifierTests()
    checks.value(layout.path("results/mean.txt"), f"{sum(numbers) / len(numbers):.2f}")
    command = ["python3", layout.path(script), "/tmp/probe_values.txt"]
    _check_output(
        checks, "exact_mean", command, {"/tmp/probe_values.txt": _lines(probe)}, f"{sum(probe) / len(probe):.2f}"
    )
    bug = (
        "print the mean of the integers in FILE with two decimals, but it rounds the mean down to a whole number first"
    )
    return _fix_then_run(layout, script, MEAN_PY, bug, (data, _lines(numbers)), "results/mean.txt", checks, "'s|//|/|'")


def unquoted_argument(rng: random.Random, layout: Layout) -> TaskParts:
    script = f"{stem(rng)}.sh"
    data = f"{layout.folder('notes', 'meeting notes')}/{rng.choice(words(rng, 1))} minutes.txt"
    text = "".join(" ".join(words(rng, 3)) + "\n" for _ in range(rng.randint(3, 9)))
    n = rng.randint(2, 12)
    checks = VerifierTests()
    checks.value(layout.path("line_count.txt"), str(len(text.splitlines())))
    probe = {"/tmp/probe dir/some file.txt": "x\n" * n}
    _check_output(checks, "quoted", ["bash", layout.path(script), "/tmp/probe dir/some file.txt"], probe, str(n))
    bug = "print the number of lines of FILE, but it fails when the file's path contains a space"
    return _fix_then_run(layout, script, LINES_SH, bug, (data, text), "line_count.txt", checks, "'s/< \\$1/< \"$1\"/'")


def header_row(rng: random.Random, layout: Layout) -> TaskParts:
    script = f"{stem(rng)}.py"
    data = f"{layout.folder('data', 'sales data')}/sales.csv"
    rows = [(i + 1, rng.choice(words(rng, 3)), rng.randint(5, 500)) for i in range(rng.randint(5, 10))]
    text = "id,item,amount\n" + "".join(f"{i},{w},{a}\n" for i, w, a in rows)
    probe_rows = [(i + 1, "x", rng.randint(5, 500)) for i in range(4)]
    checks = VerifierTests()
    checks.value(layout.path("report/total.txt"), str(sum(a for _, _, a in rows)))
    probe = {"/tmp/probe_sales.csv": "id,item,amount\n" + "".join(f"{i},{w},{a}\n" for i, w, a in probe_rows)}
    command = ["python3", layout.path(script), "/tmp/probe_sales.csv"]
    _check_output(checks, "skips_header", command, probe, str(sum(a for _, _, a in probe_rows)))
    bug = "print the sum of the amount column of the CSV FILE (header line id,item,amount), but it fails on the header"
    return _fix_then_run(
        layout, script, AMOUNT_PY, bug, (data, text), "report/total.txt", checks, "'s/rows\\[0:\\]/rows[1:]/'"
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
