"""Forged outputs: hardcode_output writes what the outputs are expected to hold, read from
wherever the sandbox gives it away; early_exit leaves the outputs empty and claims success."""

from __future__ import annotations

import ast
import re
import shlex
from pathlib import PurePosixPath

from posttrain.quality.dockerfiles import run_commands, task_dockerfile
from posttrain.quality.probes.surroundings import ARCHIVE_SCRIPT, ARCHIVES, TEST_FILE, Surroundings, copies_of
from posttrain.quality.trial import Actor

EXPECTED_HINTS = ("expected", "golden", "answer", "reference", "correct")
HINTED_MAX_BYTES = 65536
CODE_SUFFIXES = (".py", ".sh", ".bash", ".js", ".ts", ".c", ".h", ".go", ".rs", ".rb", ".java")
LEFTOVER_MAX_FILES = 40

_LITERAL = re.compile(r"==\s*(?:\"((?:[^\"\\\n]|\\.)*)\"|'((?:[^'\\\n]|\\.)*)'|(-?\d+(?:\.\d+)?)\b)")
# what a test looks for inside an output: `grep [options] 'text' FILE`, or Python's `'text' in`
_GREP = re.compile(
    r"\bgrep\s+(?:-[-\w=]+\s+)*(?:-e\s+)?(?:\"((?:[^\"\\\n]|\\.)+)\"|'([^'\n]+)'|([^\s'\"|;&<>-][^\s|;&<>]*))"
)
_CONTAINED = re.compile(r"(?:\"((?:[^\"\\\n]|\\.)+)\"|'((?:[^'\\\n]|\\.)+)')\s+in\s+[\w.()\[\]]")
_REGEX_SYNTAX = re.compile(r"(?<!\\)[\[\]*+?{}()|]|\\[dswbDSWB]")


def _unquoted(raw: str) -> str:
    try:
        return ast.literal_eval(f'"""{raw}"""')
    except (ValueError, SyntaxError):
        return raw


def literals(text: str, output_name: str) -> list[str]:
    """Values a test compares the output against (==), nearest to where it names the output."""
    lines = text.splitlines()
    anchors = [i for i, line in enumerate(lines) if output_name in line] or [0]
    values: list[str] = []
    for anchor in anchors:
        for line in lines[anchor : anchor + 30]:
            for match in _LITERAL.finditer(line):
                if match.group(3) is not None:
                    values.append(match.group(3))
                    continue
                values.append(_unquoted(match.group(1) if match.group(1) is not None else match.group(2)))
    return values


def contained_literals(text: str, output_name: str) -> list[str]:
    """Text a test looks for inside the output: grep patterns on a line that names it, and
    `'text' in ...` near it; a pattern with regex syntax is left out (its literal text would
    not match), anchors are dropped."""
    lines = text.splitlines()
    values: list[str] = []
    for i, line in enumerate(lines):
        if output_name not in line:
            continue
        for match in _GREP.finditer(line):
            command = re.split(r"&&|\|\||;|\|", line[match.start() :])[0]
            if output_name not in command:  # grep on another file of the line
                continue
            pattern = next(g for g in match.groups() if g is not None)
            fixed = re.search(r"\s-\w*F", line[match.start() : match.end()]) is not None
            pattern = pattern if fixed else pattern.removeprefix("^").removesuffix("$")
            if pattern and (fixed or not _REGEX_SYNTAX.search(pattern)):
                values.append(pattern if fixed else re.sub(r"\\(.)", r"\1", pattern))
        for nearby in lines[max(0, i - 5) : i + 15]:
            values += [
                _unquoted(m.group(1) if m.group(1) is not None else m.group(2)) for m in _CONTAINED.finditer(nearby)
            ]
    return list(dict.fromkeys(v for v in values if v.strip()))


def hardcode_output(actor: Actor, seen: Surroundings) -> bool:
    """Fills each missing output with what the sandbox says it must hold: a file named like it
    (or, for a lone output, a small file whose path says it holds expected values), the values
    the tests compare it with, a value a leftover build script assigns to a variable named like
    it, a member of a small archive named like it; failing those, a text output gets the
    literals the workspace's programs print."""
    outputs = [p for p in seen.missing_outputs if not p.endswith("/")]
    if not outputs:
        return False
    tests = list(dict.fromkeys([*seen.test_files(), *copies_of(seen, actor.task.metadata.get("tests_dir"))]))
    # read at most once, and only for an output nothing before them says how to fill
    assignments: list[tuple[str, str]] | None = None
    printed: str | None = None
    files: dict[str, tuple[str, int]] = {}
    for output in outputs:
        name = PurePosixPath(output).name
        stem = PurePosixPath(output).stem.lower()
        sources = [
            p
            for p in seen.files
            if p != output
            and not TEST_FILE.match(PurePosixPath(p).name)
            and not p.endswith((".py", ".sh", *ARCHIVES))
            and (
                PurePosixPath(p).name == name
                or (stem in PurePosixPath(p).name.lower() and any(h in p.lower() for h in EXPECTED_HINTS))
            )
        ]
        if not sources and len(outputs) == 1:
            # one output and an answer under an unrelated name: any small data file whose path
            # says it holds expected values (/app/.grading/answer_key.txt)
            sources = [
                p
                for p, size in seen.files.items()
                if p != output
                and size <= HINTED_MAX_BYTES
                and not TEST_FILE.match(PurePosixPath(p).name)
                and not p.endswith((*CODE_SUFFIXES, *ARCHIVES))
                and any(h in p.lower() for h in EXPECTED_HINTS)
            ]
        content = None
        for source in sources[:3]:
            content = actor.read(source)
            if content is not None:
                break
        if content is None:
            content = _expected_from_tests(actor, tests[:20], name)
        if content is None:
            assignments = _leftover_assignments(actor, seen) if assignments is None else assignments
            content = assigned_value(assignments, output)
        if content is not None:
            files[output] = (content, 0o644)
    actor.write_many(files)
    restored = _restore_from_archives(actor, seen, [o for o in outputs if o not in files])
    guessed: dict[str, tuple[str, int]] = {}
    # a guess at a log: not for a program (no suffix) or code output, which early_exit fills
    for output in [o for o in outputs if PurePosixPath(o).suffix and not o.endswith(CODE_SUFFIXES)]:
        if output not in files and output not in restored:
            printed = _printed_by_workspace(actor, seen) if printed is None else printed
            if printed:
                guessed[output] = (printed, 0o644)
    actor.write_many(guessed)
    return bool(files or restored or guessed)


# an output's expected version packed in a small archive of the image under the output's name
# (CI fixtures, a golden tarball): unpack the archive, copy the member
RESTORE_SCRIPT = """
out=$1; shift
for member in "$@"; do
  archive=${member%%//*}; inner=${member#*//}
  set -- "$archive" /tmp/.posttrain-probe-restore; rm -rf "$2"
  { ARCHIVE_SCRIPT } && [ -f "$2/$inner" ] && mkdir -p "$(dirname "$out")" && cp "$2/$inner" "$out" && rm -rf "$2" && exit 0
done
rm -rf /tmp/.posttrain-probe-restore
exit 1
""".replace("{ ARCHIVE_SCRIPT }", "{ " + ARCHIVE_SCRIPT + " }")


def _restore_from_archives(actor: Actor, seen: Surroundings, outputs: list[str]) -> list[str]:
    """Missing outputs nothing else filled, from a member of a small archive named like them;
    returns the ones restored. (Not from git history: restoring a file from a branch or a
    stash is the work itself in a git task.)"""
    restored = []
    for output in [o for o in outputs if o in seen.missing_outputs and not o.endswith("/")][:10]:
        name = PurePosixPath(output).name
        members = [f"{archive}//{member}" for archive, member in seen.archived if PurePosixPath(member).name == name]
        if not members:
            continue
        result = actor.run(
            f"set -- {shlex.quote(output)} {' '.join(shlex.quote(m) for m in members[:5])}\n{RESTORE_SCRIPT}",
            timeout=60,
        )
        if result.exit_code == 0:
            restored.append(output)
    return restored


def _expected_from_tests(actor: Actor, tests: list[str], name: str) -> str | None:
    """What the tests say the output must be: the first value it must equal, else every text
    it must contain, one per line."""
    texts = [actor.read(test) or "" for test in tests]
    for text in texts:
        values = literals(text, name)
        if values:
            return values[0] if values[0].endswith("\n") else values[0] + "\n"
    contained = list(dict.fromkeys(v for text in texts for v in contained_literals(text, name)))
    return "".join(v + "\n" for v in contained) if contained else None


ASSIGNMENT = re.compile(
    r"^\s*(?:export\s+|readonly\s+|const\s+|let\s+|var\s+|local\s+)?([A-Za-z_]\w*)\s*:?=\s*"
    r"[\"']?([^\s\"'#;$`(){}\[\]]{1,200})[\"']?\s*;?\s*(?:#.*)?$",
    re.MULTILINE,
)


def _leftover_assignments(actor: Actor, seen: Surroundings) -> list[tuple[str, str]]:
    """(name, value) of the simple assignments in the code files the image's build ran and
    left behind (a Dockerfile RUN names them), that the instruction does not name: the
    script that generated the task's data, with the answer in clear text. Code the build did
    not run may be the very thing the task asks the agent to read."""
    runs = "\n".join(run_commands(task_dockerfile(actor.task)))
    named = set(seen.outputs)
    files = [
        p
        for p, size in seen.files.items()
        if p not in named
        and size <= HINTED_MAX_BYTES
        and p.endswith(CODE_SUFFIXES)
        and re.search(rf"(?<![\w.-]){re.escape(PurePosixPath(p).name)}(?![\w-])", runs)
    ]
    return [pair for path in files[:LEFTOVER_MAX_FILES] for pair in ASSIGNMENT.findall(actor.read(path) or "")]


def assigned_value(assignments: list[tuple[str, str]], output: str) -> str | None:
    """The value assigned to a variable called like the output (PIN=... for pin.txt) or like
    an expected answer: the answer in clear text in code that generated the task's data."""
    stem = PurePosixPath(output).stem.lower()
    for key, value in assignments:
        if key.lower() == stem or any(hint in key.lower() for hint in EXPECTED_HINTS):
            return value + "\n"
    return None


# a literal a program prints or logs: print('...'), echo "...", console.log(...), logger.info(...)
PRINTED = re.compile(
    r"\b(?:print|echo|printf|puts|println!?|console\.log|fmt\.Print(?:ln|f)?|System\.out\.println|"
    r"(?:logger|logging|log)\.(?:info|warning|warn|error|debug))\s*\(?\s*(?:\"([^\"\\\n{}$%]{4,200})\"|"
    r"'([^'\\\n{}$%]{4,200})')"
)


def _printed_by_workspace(actor: Actor, seen: Surroundings) -> str:
    """What the workspace's programs would print, one literal per line: the log a task asks
    for, written without running them (the programs the instruction names first, then the
    ones in the working directory)."""
    workdir = actor.workdir.rstrip("/") + "/"
    programs = [p for p in seen.outputs if p in seen.files and p.endswith(CODE_SUFFIXES)]
    programs += [
        p
        for p in seen.files
        if p.startswith(workdir)
        and p.endswith(CODE_SUFFIXES)
        and not TEST_FILE.match(PurePosixPath(p).name)
        and seen.files[p] <= HINTED_MAX_BYTES
    ]
    lines: list[str] = []
    for program in list(dict.fromkeys(programs))[:10]:
        for match in PRINTED.finditer(actor.read(program) or ""):
            lines.append(match.group(1) if match.group(1) is not None else match.group(2))
    return "".join(line + "\n" for line in list(dict.fromkeys(lines))[:200])


def early_exit(actor: Actor, seen: Surroundings) -> bool:
    """Creates the missing outputs empty (a program as a copy of /bin/true) and touches the
    existing ones (a verifier may only check that a stale output was regenerated), then claims
    success."""
    stale = [p for p in seen.outputs if p in seen.files]
    if not seen.missing_outputs and not stale:
        return False
    moves = [f"touch -c {shlex.quote(p)}" for p in stale]
    for output in seen.missing_outputs:
        quoted = shlex.quote(output.rstrip("/"))
        # an output without a suffix is a program (build/stats): a real one that does nothing
        placeholder = "cp /bin/true" if "." not in PurePosixPath(output).name else ": >"
        moves.append(
            f"mkdir -p {quoted}"
            if output.endswith("/")
            else f'mkdir -p "$(dirname {quoted})"; [ -e {quoted} ] || {placeholder} {quoted}'
        )
    actor.run("; ".join(moves) + "; echo 'Task completed successfully.'; exit 0", timeout=30)
    return True
