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


def _printf(lines: list[str], target: str) -> str:
    """A command that writes `lines` (a bash shebang first) to the shell-quoted `target`."""
    return f"printf '%s\\n' '#!/bin/bash' {' '.join(_quoted(line) for line in lines)} > {target}"


def _one_liner(slug: str, body: str, ask: str, cases: list[tuple[list[str], str]], files: dict[str, str]):
    """A difficulty-1 template: a script of one line, run with `bash` on the tests' arguments."""

    def build(rng: random.Random, layout: Layout) -> TaskParts:
        script = f"{rng.choice(words(rng, 1))}_{slug}.sh"
        checks = VerifierTests()
        writes = "".join(
            f"Path({p!r}).parent.mkdir(parents=True, exist_ok=True)\nPath({p!r}).write_text({t!r})\n"
            for p, t in files.items()
        )
        for args, expected in cases:
            checks.add(
                slug.replace("-", "_"),
                f"{writes}assert run('bash', {layout.path(script)!r}, *{args!r}).stdout == {expected!r}",
            )
        return TaskParts(
            instruction=Spec(
                goal=f"write a bash script {layout.show(script)} so that `bash {layout.show(script)}` {ask}"
            ),
            files={},
            tests=checks.render(),
            steps=[f"echo {_quoted(body)} > {layout.sh(script)}"],
        )

    return build


def count_arguments(rng: random.Random, layout: Layout) -> TaskParts:
    n = rng.randint(2, 6)
    args = words(rng, n)
    return _one_liner(
        "count",
        "echo $#",
        "followed by any arguments prints how many arguments it was given",
        [(args, f"{n}\n"), ([], "0\n")],
        {},
    )(rng, layout)


def add_numbers(rng: random.Random, layout: Layout) -> TaskParts:
    a, b = rng.randint(1, 500), rng.randint(1, 500)
    return _one_liner(
        "add",
        "echo $(( $1 + $2 ))",
        "A B prints the sum of the integers A and B (for example `5 7` prints 12)",
        [([str(a), str(b)], f"{a + b}\n"), (["0", str(b)], f"{b}\n")],
        {},
    )(rng, layout)


def count_lines(rng: random.Random, layout: Layout) -> TaskParts:
    n = rng.randint(2, 12)
    return _one_liner(
        "lines",
        'wc -l < "$1"',
        "FILE prints the number of lines in FILE (just the number)",
        [(["/tmp/probe lines.txt"], f"{n}\n")],
        {"/tmp/probe lines.txt": "x\n" * n},
    )(rng, layout)


def usage_error(rng: random.Random, layout: Layout) -> TaskParts:
    name = rng.choice(words(rng, 1))
    word = rng.choice(words(rng, 1))
    checks = VerifierTests()
    checks.add("upper", f"assert run({layout.path(name)!r}, {word!r}).stdout == {word.upper() + chr(10)!r}")
    checks.add(
        "usage",
        f"result = run({layout.path(name)!r})\n"
        "assert result.returncode == 1 and 'usage' in result.stderr.lower() and result.stdout == ''",
    )
    body = [
        'if [ $# -lt 1 ]; then echo "usage: $0 WORD" >&2; exit 1; fi',
        'echo "$1" | tr a-z A-Z',
    ]
    return TaskParts(
        instruction=Spec(
            goal=f"write an executable bash script {layout.show(name)} that prints its first argument in upper case",
            notes=[
                "Run without arguments, it prints a line starting with 'usage:' to standard error, prints "
                "nothing to standard output and exits with status 1."
            ],
        ),
        files={},
        tests=checks.render(),
        steps=[_printf(body, layout.sh(name)), f"chmod +x {layout.sh(name)}"],
    )


def list_text_files(rng: random.Random, layout: Layout) -> TaskParts:
    name = rng.choice(words(rng, 1))
    names = sorted(f"{w}.txt" for w in words(rng, 4))
    other = f"{rng.choice(words(rng, 1))}.csv"
    writes = "".join(f"Path('/tmp/probe_dir/{n}').write_text('x')\n" for n in [*names, other])
    checks = VerifierTests()
    checks.add(
        "lists_txt",
        f"Path('/tmp/probe_dir').mkdir(exist_ok=True)\n{writes}"
        f"assert run({layout.path(name)!r}, '/tmp/probe_dir').stdout.splitlines() == {names!r}",
    )
    return TaskParts(
        instruction=Spec(
            goal=f"write an executable bash script {layout.show(name)} that, given a directory as its only argument, "
            "prints the names of the .txt files in it",
            output="one file name per line (the name only, no directory), sorted",
        ),
        files={},
        tests=checks.render(),
        steps=[
            _printf(['for f in "$1"/*.txt; do basename "$f"; done'], layout.sh(name)),
            f"chmod +x {layout.sh(name)}",
        ],
    )


def env_default(rng: random.Random, layout: Layout) -> TaskParts:
    name = rng.choice(words(rng, 1))
    person = rng.choice(people(rng, 1))
    checks = VerifierTests()
    env_run = "subprocess.run([{path!r}], capture_output=True, text=True, timeout=10, env={env})"
    checks.add(
        "default",
        f"env = {{k: v for k, v in os.environ.items() if k != 'GREET_NAME'}}\n"
        f"assert {env_run.format(path=layout.path(name), env='env')}.stdout == 'Hello, world\\n'",
    )
    checks.add(
        "named",
        f"env = {{**os.environ, 'GREET_NAME': {person!r}}}\n"
        f"assert {env_run.format(path=layout.path(name), env='env')}.stdout == {'Hello, ' + person + chr(10)!r}",
    )
    return TaskParts(
        instruction=Spec(
            goal=f"write an executable bash script {layout.show(name)} that prints `Hello, NAME` where NAME is the "
            "value of the environment variable GREET_NAME, or `world` when GREET_NAME is not set",
        ),
        files={},
        tests=checks.render(),
        steps=[_printf(['echo "Hello, ${GREET_NAME:-world}"'], layout.sh(name)), f"chmod +x {layout.sh(name)}"],
    )


def words_per_file(rng: random.Random, layout: Layout) -> TaskParts:
    script = f"bin/{rng.choice(words(rng, 1))}"
    probes = {f"/tmp/probe dir/{w} notes.txt": " ".join(words(rng, rng.randint(1, 6))) + "\n" for w in words(rng, 3)}
    expected = "".join(f"{p.rsplit('/', 1)[1]}: {len(t.split())}\n" for p, t in probes.items())
    writes = "".join(f"Path({p!r}).write_text({t!r})\n" for p, t in probes.items())
    checks = VerifierTests()
    checks.add(
        "counts_each",
        f"Path('/tmp/probe dir').mkdir(exist_ok=True)\n{writes}"
        f"assert run({layout.path(script)!r}, *{list(probes)!r}).stdout == {expected!r}",
    )
    return TaskParts(
        instruction=Spec(
            goal=f"create an executable bash script {layout.show(script)} that, for each file given as an argument "
            "(any number of them), prints the file's name and its number of words",
            output="one line per file, in argument order: 'NAME: COUNT', NAME without its directory",
            notes=[f"{layout.show('bin')} does not exist yet.", "File names may contain spaces."],
        ),
        files={},
        tests=checks.render(),
        steps=[
            f"mkdir -p {layout.sh('bin')}",
            _printf(['for f in "$@"; do echo "$(basename "$f"): $(wc -w < "$f")"; done'], layout.sh(script)),
            f"chmod +x {layout.sh(script)}",
        ],
    )


def backup_copy(rng: random.Random, layout: Layout) -> TaskParts:
    script = f"bin/{rng.choice(words(rng, 1))}_backup"
    content = " ".join(words(rng, 5)) + "\n"
    checks = VerifierTests()
    checks.add(
        "copies",
        "Path('/tmp/probe in').mkdir(exist_ok=True)\n"
        f"Path('/tmp/probe in/my file.txt').write_text({content!r})\n"
        f"result = run({layout.path(script)!r}, '/tmp/probe in/my file.txt', '/tmp/probe out/new dir')\n"
        "assert result.returncode == 0, result.stderr\n"
        f"assert Path('/tmp/probe out/new dir/my file.txt.bak').read_text() == {content!r}\n"
        f"assert Path('/tmp/probe in/my file.txt').read_text() == {content!r}",
    )
    return TaskParts(
        instruction=Spec(
            goal=f"create an executable bash script {layout.show(script)} that takes a FILE and a DIR and copies FILE "
            "into DIR as its own name plus .bak, creating DIR (and its parents) if needed",
            inputs=["For example `backup /x/a.txt /y/old` creates /y/old/a.txt.bak."],
            notes=[f"{layout.show('bin')} does not exist yet.", "Paths may contain spaces."],
        ),
        files={},
        tests=checks.render(),
        steps=[
            f"mkdir -p {layout.sh('bin')}",
            _printf(['mkdir -p "$2" && cp "$1" "$2/$(basename "$1").bak"'], layout.sh(script)),
            f"chmod +x {layout.sh(script)}",
        ],
    )


def has_errors(rng: random.Random, layout: Layout) -> TaskParts:
    script = f"bin/has_{rng.choice(words(rng, 1))}_errors"
    checks = VerifierTests()
    checks.add(
        "status",
        "Path('/tmp/probe logs').mkdir(exist_ok=True)\n"
        "Path('/tmp/probe logs/bad.log').write_text('ok\\nERROR disk full\\n')\n"
        "Path('/tmp/probe logs/good.log').write_text('ok\\nall fine\\n')\n"
        f"bad = run({layout.path(script)!r}, '/tmp/probe logs/bad.log')\n"
        f"good = run({layout.path(script)!r}, '/tmp/probe logs/good.log')\n"
        "assert (bad.returncode, good.returncode) == (0, 1)\n"
        "assert bad.stdout == good.stdout == ''",
    )
    return TaskParts(
        instruction=Spec(
            goal=f"create an executable bash script {layout.show(script)} that exits with status 0 when the file "
            "given as its argument contains the word ERROR and with status 1 when it does not",
            notes=["It prints nothing.", f"{layout.show('bin')} does not exist yet.", "Paths may contain spaces."],
        ),
        files={},
        tests=checks.render(),
        steps=[
            f"mkdir -p {layout.sh('bin')}",
            _printf(['grep -q ERROR "$1"'], layout.sh(script)),
            f"chmod +x {layout.sh(script)}",
        ],
    )


def _quoted(text: str) -> str:
    return "'" + text.replace("'", "'\\''") + "'"


FAMILY = Family(
    name="script-write",
    skill="write a small bash script to a spec",
    templates={
        1: (
            Template("greeting", "a one-line greeting script", greeting),
            Template("count-arguments", "a script that counts its arguments", count_arguments),
            Template("add-numbers", "a script that adds two numbers", add_numbers),
            Template("count-lines", "a script that counts a file's lines", count_lines),
        ),
        2: (
            Template("file-filter", "an executable script over a file argument", file_filter),
            Template("usage-error", "a script with a usage message and an exit status", usage_error),
            Template("list-text-files", "a script that loops over a directory's files", list_text_files),
            Template("env-default", "a script that reads an environment variable with a default", env_default),
        ),
        3: (
            Template(
                "filter-with-spaces",
                "the same in a folder that does not exist, for file names with spaces",
                filter_with_spaces,
            ),
            Template("words-per-file", "a loop over any number of arguments (spaces)", words_per_file),
            Template("backup-copy", "a two-argument script that creates a folder and copies", backup_copy),
            Template("has-errors", "a script whose exit status answers a question", has_errors),
        ),
    },
)
