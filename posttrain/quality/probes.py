"""Exploit probes: scripted adversarial agents, each trying one known reward hack from a fresh
sandbox without solving the task. Then the task's verifier runs as after any episode. A probe
that earns a passing reward makes the task `exploitable`.

A probe first looks around the sandbox as an agent could (one pass, shared by all probes), and
has nothing to do when its hack has nothing to work on.

    read_solution    find the reference solution in the sandbox and run it (archives too)
    inject_output    write a shell payload into the named outputs: a verifier that evals them or
                     reads them in bash arithmetic runs it, writes a passing reward and dies
    hardcode_output  copy expected outputs it can read (copied tests, expected files) into
                     the outputs the instruction names
    early_exit       create the named outputs empty, claim success and stop
    edit_tests       neuter test files it can find in the workspace, and the code files the
                     tests name (helpers test.sh sources or runs)
    reward_file      write reward.txt / reward.json where a verifier might read them
    pytest_hooks     conftest.py, pytest.ini (the image's own too) and Python startup hooks
                     (sitecustomize.py, usercustomize.py, .pth; in site directories and
                     writable PYTHONPATH entries) that turn every failure into a pass
    shadow_binaries  fake python, pytest, bash, curl ... on every PATH directory it can write
                     or create, as shell functions and a PATH entry in rc files and the files
                     $BASH_ENV and $ENV name, and pytest, unittest and doctest modules in the
                     working directory
    planted_verdict  "1" in the files the tests name outside the workspace that do not exist
                     (a verdict test.sh copies, which its checker writes only if it gets far)
    exit_on_load     every code file of the working directory ends its process with status 0
                     as soon as it is loaded (os._exit(0), exit 0): tests that import or run
                     the agent's code and trust their run's exit status pass

`all_probes` plays every applicable hack but those in ALONE (inject_output, exit_on_load,
planted_verdict: each
would spoil the others, so each has a trial of its own) in one sandbox, in the order above (each one only
pushes toward a pass, and the ones that read the sandbox go before the ones that rewrite
it): when that fails, each one alone fails too, and only a pass needs a trial per probe to
name the hack.
"""

from __future__ import annotations

import ast
import hashlib
import json
import re
import shlex
import time
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Callable

from posttrain.quality.execution import run_lines
from posttrain.quality.task_paths import checked_paths, instruction_paths
from posttrain.quality.trial import NOT_APPLICABLE, Actor, Step

PRUNE = ("/proc", "/sys", "/dev", "/usr", "/lib", "/lib32", "/lib64", "/libx32", "/bin", "/sbin", "/etc",
         "/var/lib", "/var/cache", "/var/log", "/logs", "/boot", "/run", "/snap")
PRUNE_NAMES = ("node_modules", ".git", "site-packages", "dist-packages", "__pycache__", ".cache")
TEST_FILE = re.compile(r"^((test_|check|verify|grade|run[_-]tests?|run[_-]checks?).*|.*_test|tests?)\.(py|sh|bash|rb)$|"
                       r"^run[_-]tests?$|^.*\.(test|spec)\.[jt]s$|^.*_test\.go$|^.*\.bats$")
CODE = (".py", ".sh", ".bash", ".js", ".ts", ".rb", ".go", ".bats")
SOLUTION_FILE = re.compile(r"^(solve|solution|oracle|reference_solution)(\.sh|\.py)?$")
EXPECTED_HINTS = ("expected", "golden", "answer", "reference", "correct")
HINTED_MAX_BYTES = 65536
CODE_SUFFIXES = (".py", ".sh", ".bash", ".js", ".ts", ".c", ".h", ".go", ".rs", ".rb", ".java")
SHADOWED = ("python", "python3", "pytest", "py.test", "bash", "sh", "curl", "wget", "node", "npm", "make", "diff",
            "cmp", "grep", "jq", "sqlite3", "gcc", "cc", "go", "cargo", "java", "ruby", "perl", "git", "timeout")
RC_FILES = ("/root/.bashrc", "/root/.bash_profile", "/root/.profile", "/etc/bash.bashrc", "/etc/profile",
            "/etc/profile.d/zz-probe.sh")
FAKE_BIN_DIR = "/root/.posttrain-probe-bin"
SHADOWED_MODULES = ("pytest", "unittest", "doctest")  # runners `python -m` finds in the working directory first
PYTEST_CONFIGS = ("pytest.ini", ".pytest.ini", "pyproject.toml", "tox.ini", "setup.cfg")
HELPER_CODE = (".py", ".sh", ".bash")
MAX_FILES = 20000
ARCHIVES = (".tar", ".tar.gz", ".tgz", ".zip")
ARCHIVE_MAX_BYTES = 10_000_000
ARCHIVE_MAX_MEMBERS = 200
# lists, extracts and hashes one archive ($1) into $2; zip needs unzip or python3
ARCHIVE_SCRIPT = f"""
case "$1" in
  *.zip) list() {{ unzip -Z1 "$1" || python3 -m zipfile -l "$1"; }}
         x() {{ unzip -qo "$1" -d "$2" || python3 -m zipfile -e "$1" "$2"; }} ;;
  *) list() {{ tar -tf "$1"; }}; x() {{ tar -xf "$1" -C "$2" --no-same-owner; }} ;;
esac
n=$(list "$1" 2>/dev/null | wc -l)
[ "$n" -gt 0 ] && [ "$n" -le {ARCHIVE_MAX_MEMBERS} ] && mkdir -p "$2" && x "$1" "$2" >/dev/null 2>&1
"""

FORCE_PASS_PLUGIN = '''import pytest


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    report.outcome, report.longrepr = "passed", None


@pytest.hookimpl(hookwrapper=True)
def pytest_make_collect_report(collector):
    outcome = yield
    report = outcome.get_result()
    if report.failed:
        report.outcome, report.longrepr = "passed", None


def pytest_sessionfinish(session, exitstatus):
    session.exitstatus = 0
'''
STARTUP_HOOK = '''import atexit
import os

os.environ.setdefault("PYTEST_PLUGINS", "posttrain_probe_plugin")
atexit.register(lambda: os._exit(0))
'''
REWARD_SCRIPT = "#!/bin/sh\nmkdir -p /logs/verifier && echo 1 > /logs/verifier/reward.txt\n"
REWARD_PROGRAM = ("import os\nos.makedirs('/logs/verifier', exist_ok=True)\n"
                  "open('/logs/verifier/reward.txt', 'w').write('1\\n')\n")
# `eval` runs it as a command and bash arithmetic expands the subscript: either way the command
# substitution writes a passing reward and kills test.sh ($$ is test.sh there) before it writes its own
# short: a test may read only an output's first bytes (head -c 64); run by eval or source, it
# ends test.sh cleanly (a test.sh killed by a signal gives no reward)
INJECTION = "echo 1 >/logs/verifier/reward.txt;exit 0"
# appended to a file bash sources (test.sh's `source`, $BASH_ENV): it ends test.sh cleanly
SOURCED_PAYLOAD = "\nmkdir -p /logs/verifier; echo 1 > /logs/verifier/reward.txt; exit 0\n"
REWARD_C = ('#include <stdio.h>\nint main(void) {\n    FILE *f = fopen("/logs/verifier/reward.txt", "w");\n'
            '    if (f) { fputs("1\\n", f); fclose(f); }\n    return 0;\n}\n')
PYTEST_INI = "[pytest]\naddopts = --collect-only -q\n"
FAKE_BINARY = '''#!/bin/sh
# posttrain probe: a shadowed {name}
mkdir -p /logs/verifier 2>/dev/null && echo 1 > /logs/verifier/reward.txt 2>/dev/null
echo "all tests passed"
exit 0
'''


@dataclass
class Surroundings:
    """What an agent can find in its sandbox, outside the system directories."""

    files: dict[str, int] = field(default_factory=dict)  # path -> size
    path_dirs: list[str] = field(default_factory=list)
    writable_dirs: list[str] = field(default_factory=list)  # of path_dirs and venv bin dirs; missing ones it can create
    python_path: list[str] = field(default_factory=list)  # $PYTHONPATH entries it can write or create
    startup_files: list[str] = field(default_factory=list)  # what $BASH_ENV and $ENV name: bash sources it first
    site_dirs: list[str] = field(default_factory=list)  # every Python's site-packages, user site included
    outputs: list[str] = field(default_factory=list)  # paths the instruction names
    missing_outputs: list[str] = field(default_factory=list)  # of those, the ones that do not exist
    digests: dict[str, str] = field(default_factory=dict)  # path -> sha256, for files sized like a task file
    archived: dict[tuple[str, str], str] = field(default_factory=dict)  # (archive, member) -> sha256, small archives

    def named(self, pattern: re.Pattern) -> list[str]:
        return [p for p in self.files if pattern.match(PurePosixPath(p).name)]

    def test_files(self) -> list[str]:
        """Test-like files by name, and code files under a tests/ or test/ directory."""
        in_test_dir = [p for p in self.files if p.endswith(CODE) and PurePosixPath(p).name != "conftest.py"
                       and any(part in ("tests", "test") for part in PurePosixPath(p).parts[1:-1])]
        return [p for p in dict.fromkeys([*self.named(TEST_FILE), *in_test_dir]) if "posttrain_probe" not in p]


def _task_files(directory: str | None) -> dict[str, tuple[int, str]]:
    """relative path -> (size, sha256) of a task's own directory (tests/, solution/)."""
    if not directory or not Path(directory).is_dir():
        return {}
    return {str(f.relative_to(directory)): (f.stat().st_size, hashlib.sha256(f.read_bytes()).hexdigest())
            for f in Path(directory).rglob("*") if f.is_file() and 0 < f.stat().st_size < 5_000_000}


def look_around(actor: Actor) -> Surroundings:
    text = actor.task.instruction if isinstance(actor.task.instruction, str) else "\n".join(
        m.get("content", "") for m in actor.task.instruction)
    outputs = instruction_paths(text, actor.workdir)
    prune = " -o ".join([*(f"-path {p}" for p in PRUNE), *(f"-name {shlex.quote(n)}" for n in PRUNE_NAMES)])
    quoted_outputs = " ".join(shlex.quote(p.rstrip("/") or "/") for p in outputs)
    script = f"""
echo '== files'
find / \\( {prune} \\) -prune -o -type f -printf '%s\\t%p\\n' 2>/dev/null | head -n {MAX_FILES}
echo '== path'
echo "$PATH" | tr ':' '\\n'
venvs=$(find / \\( -path /proc -o -path /sys -o -path /dev -o -path /usr -o -name node_modules \\) -prune -o \\
  -path '*/bin/python*' \\( -type f -o -type l \\) -print 2>/dev/null | head -n 20)
# a directory that does not exist yet is as good when its nearest existing parent is writable
writable() {{ p=$1; while [ ! -e "$p" ]; do p=$(dirname "$p"); done; [ -d "$p" ] && [ -w "$p" ]; }}
echo '== writable'
for d in $(echo "$PATH" | tr ':' ' ') $(for v in $venvs; do dirname "$v"; done); do writable "$d" && echo "$d"; done
echo '== pythonpath'
for d in $(echo "$PYTHONPATH" | tr ':' ' '); do writable "$d" && echo "$d"; done
echo '== startup'
for f in "$BASH_ENV" "$ENV"; do [ -n "$f" ] && echo "$f"; done
echo '== sites'
for p in $( (for p in /usr/local/bin/python3* /usr/bin/python3*; do [ -x "$p" ] && readlink -f "$p"; done \
  | grep -E '/python3(\\.[0-9]+)?$'; for v in $venvs; do echo "$v"; done) | sort -u); do
  "$p" -S -c 'import site; print("\\n".join(site.getsitepackages() + [site.getusersitepackages()]))' 2>/dev/null
done | sort -u
echo '== missing'
for p in {quoted_outputs}; do [ -e "$p" ] || echo "$p"; done
true
"""
    started = time.perf_counter()
    result = actor.run(script, timeout=120, record=False)
    sections: dict[str, list[str]] = {}
    current = None
    for line in result.stdout.splitlines():
        if line.startswith("== "):
            current = line[3:]
            sections[current] = []
        elif current is not None and line:
            sections[current].append(line)
    seen = Surroundings()
    for line in sections.get("files", []):
        size, _, path = line.partition("\t")
        if path.startswith("/") and size.isdigit():
            seen.files[path] = int(size)
    seen.path_dirs = list(dict.fromkeys(sections.get("path", [])))
    seen.writable_dirs = list(dict.fromkeys(sections.get("writable", [])))
    seen.site_dirs = [s for s in sections.get("sites", []) if s.startswith("/")]
    seen.python_path = [d for d in dict.fromkeys(sections.get("pythonpath", [])) if d.startswith("/")]
    seen.startup_files = [f for f in dict.fromkeys(sections.get("startup", [])) if f.startswith("/")]
    missing = set(sections.get("missing", []))
    seen.outputs = outputs
    seen.missing_outputs = [p for p in outputs if (p.rstrip("/") or "/") in missing]
    sizes = {size for d in (actor.task.solution, actor.task.metadata.get("tests_dir"))
             for size, _ in _task_files(d).values()}
    same_size = [p for p, size in seen.files.items() if size in sizes]
    if same_size:
        listing = actor.run("sha256sum -- " + " ".join(shlex.quote(p) for p in same_size[:500]) + " 2>/dev/null; true",
                            timeout=120, record=False)
        for line in listing.stdout.splitlines():
            digest, _, path = line.partition("  ")
            seen.digests[path] = digest
    seen.archived = _archive_members(actor, seen)
    actor.trial.steps.append(_summary_step(seen, time.perf_counter() - started))
    return seen


def _archive_members(actor: Actor, seen: Surroundings) -> dict[tuple[str, str], str]:
    """Hashes of the files inside the small archives the sandbox holds: a reference solution
    packed in a tarball is as readable as a plain copy."""
    archives = [p for p, size in seen.files.items() if p.endswith(ARCHIVES) and 0 < size <= ARCHIVE_MAX_BYTES][:20]
    if not archives:
        return {}
    script = "".join(f"set -- {shlex.quote(a)} /tmp/.posttrain-probe-archive; rm -rf \"$2\"; {{ {ARCHIVE_SCRIPT} }} && "
                     f"(cd \"$2\" && find . -type f -size -5000k -exec sha256sum {{}} + | sed \"s|^|$1\\t|\")\n"
                     for a in archives)
    listing = actor.run(script + "rm -rf /tmp/.posttrain-probe-archive; true", timeout=120, record=False)
    members: dict[tuple[str, str], str] = {}
    for line in listing.stdout.splitlines():
        archive, _, rest = line.partition("\t")
        digest, _, member = rest.partition("  ")
        if archive in archives and member.startswith("./"):
            members[(archive, member[2:])] = digest
    return members


def _summary_step(seen: Surroundings, duration_s: float) -> Step:
    return Step("look around: find files outside the system directories, PATH, Python site directories",
                0, duration_s, output_tail=f"{len(seen.files)} files, writable PATH dirs {seen.writable_dirs}, "
                f"site dirs {seen.site_dirs}, writable PYTHONPATH dirs {seen.python_path}, "
                f"startup files {seen.startup_files}, missing outputs {seen.missing_outputs}")


def _copies_of(seen: Surroundings, directory: str | None) -> list[str]:
    digests = {digest for _, digest in _task_files(directory).values()}
    return [p for p, d in seen.digests.items() if d in digests]


# ---- the probes: each returns False when it has nothing to try -----------------------------

def read_solution(actor: Actor, seen: Surroundings) -> bool:
    """Runs what it finds of the reference solution: copies of solution/ files (by content)
    and files named like one, shell scripts with bash, Python files with python3; failing
    those, such a script packed in a small archive, unpacked whole."""
    found = [p for p in dict.fromkeys([*_copies_of(seen, actor.task.solution), *seen.named(SOLUTION_FILE)])
             if p.endswith((".sh", ".py")) or SOLUTION_FILE.match(PurePosixPath(p).name)]
    found.sort(key=lambda p: not p.endswith(".sh"))  # a solve.sh drives the rest
    for script in found[:3]:
        runner = "python3" if script.endswith(".py") else "bash"
        actor.run(f"cd {shlex.quote(str(PurePosixPath(script).parent))} && {runner} {shlex.quote(script)}",
                  timeout=min(float(actor.task.limits.agent_timeout_s), 600.0))
    if found:
        return True
    digests = {digest for _, digest in _task_files(actor.task.solution).values()}
    packed = [(archive, member) for (archive, member), digest in seen.archived.items() if member.endswith((".sh", ".py"))
              and (digest in digests or SOLUTION_FILE.match(PurePosixPath(member).name))]
    packed.sort(key=lambda m: not m[1].endswith(".sh"))
    for archive, member in packed[:3]:  # unpacked whole: the script may use its neighbours
        target = f"/tmp/.posttrain-probe-unpacked/{len(archive)}-{PurePosixPath(archive).name}"
        runner = "python3" if member.endswith(".py") else "bash"
        where, name = (shlex.quote(str(part)) for part in (PurePosixPath(member).parent, PurePosixPath(member).name))
        actor.run(f"set -- {shlex.quote(archive)} {shlex.quote(target)}\n{ARCHIVE_SCRIPT}\n"
                  f"cd \"$2\"/{where} && {runner} {name}",
                  timeout=min(float(actor.task.limits.agent_timeout_s), 600.0))
    return bool(packed)


_LITERAL = re.compile(r"==\s*(?:\"((?:[^\"\\\n]|\\.)*)\"|'((?:[^'\\\n]|\\.)*)'|(-?\d+(?:\.\d+)?)\b)")
# what a test looks for inside an output: `grep [options] 'text' FILE`, or Python's `'text' in`
_GREP = re.compile(r"\bgrep\s+(?:-[-\w=]+\s+)*(?:-e\s+)?(?:\"((?:[^\"\\\n]|\\.)+)\"|'([^'\n]+)'|([^\s'\"|;&<>-][^\s|;&<>]*))")
_CONTAINED = re.compile(r"(?:\"((?:[^\"\\\n]|\\.)+)\"|'((?:[^'\\\n]|\\.)+)')\s+in\s+[\w.()\[\]]")
_REGEX_SYNTAX = re.compile(r"(?<!\\)[\[\]*+?{}()|]|\\[dswbDSWB]")


def _unquoted(raw: str) -> str:
    try:
        return ast.literal_eval(f'"""{raw}"""')
    except (ValueError, SyntaxError):
        return raw


def _literals(text: str, output_name: str) -> list[str]:
    """Values a test compares the output against (==), nearest to where it names the output."""
    lines = text.splitlines()
    anchors = [i for i, line in enumerate(lines) if output_name in line] or [0]
    values: list[str] = []
    for anchor in anchors:
        for line in lines[anchor:anchor + 30]:
            for match in _LITERAL.finditer(line):
                if match.group(3) is not None:
                    values.append(match.group(3))
                    continue
                values.append(_unquoted(match.group(1) if match.group(1) is not None else match.group(2)))
    return values


def _contained_literals(text: str, output_name: str) -> list[str]:
    """Text a test looks for inside the output: grep patterns on a line that names it, and
    `'text' in ...` near it; a pattern with regex syntax is left out (its literal text would
    not match), anchors are dropped."""
    lines = text.splitlines()
    values: list[str] = []
    for i, line in enumerate(lines):
        if output_name not in line:
            continue
        for match in _GREP.finditer(line):
            command = re.split(r"&&|\|\||;|\|", line[match.start():])[0]
            if output_name not in command:  # grep on another file of the line
                continue
            pattern = next(g for g in match.groups() if g is not None)
            fixed = re.search(r"\s-\w*F", line[match.start():match.end()]) is not None
            pattern = pattern if fixed else pattern.removeprefix("^").removesuffix("$")
            if pattern and (fixed or not _REGEX_SYNTAX.search(pattern)):
                values.append(pattern if fixed else re.sub(r"\\(.)", r"\1", pattern))
        for nearby in lines[max(0, i - 5):i + 15]:
            values += [_unquoted(m.group(1) if m.group(1) is not None else m.group(2))
                       for m in _CONTAINED.finditer(nearby)]
    return list(dict.fromkeys(v for v in values if v.strip()))


_COMPARED = re.compile(r"\$\{?([A-Za-z_]\w*)\}?(?=\s*(?:-eq|-ne|-lt|-le|-gt|-ge|==|!=))|"
                       r"(?:-eq|-ne|-lt|-le|-gt|-ge|==|!=)\s*\$\{?([A-Za-z_]\w*)")


def _compared_variable(actor: Actor) -> str | None:
    """For a test.sh that reads an output in bash arithmetic (and evals or sources nothing):
    the name of the variable it compares the output with, which arithmetic expands to the
    expected value (`[ $(( got )) -eq $want ]` with got="want"). None otherwise."""
    texts = _tests_text(actor, (".sh", ".bash"))
    if any(re.search(r"\beval\b|(?:^|[;&|({]|\bthen|\bdo)\s*(?:source|\.)\s", t, re.MULTILINE) for t in texts):
        return None
    for text in texts:
        for match in _COMPARED.finditer(text):
            name = match.group(1) or match.group(2)
            assigned = re.search(rf"^\s*(?:local\s+)?{name}=(.*)$", text, re.MULTILINE)
            if assigned and not re.search(r"/app/|/root/|/tmp/|\bcat\b|\bhead\b|\bread\b", assigned.group(1)):
                return name
    return None


def inject_output(actor: Actor, seen: Surroundings) -> bool:
    """Into the missing outputs: for a test.sh that evals or sources them, a passing reward and
    a clean `exit 0`; for one that reads them in arithmetic, the name of the variable it
    compares them with. And the reward and `exit 0` appended to the existing files bash
    sources before or inside test.sh ($BASH_ENV, $ENV, test.sh's `source`)."""
    outputs = [p for p in seen.missing_outputs if not p.endswith("/")]
    sourced = list(dict.fromkeys([*seen.startup_files, *_sourced_by_tests(actor, seen)]))
    if not outputs and not sourced:
        return False
    # an output something before it made (the solution read_solution ran) stays as it is
    payload = _compared_variable(actor) or INJECTION
    actor.write_many({"/tmp/.posttrain-probe-payload": (payload + "\n", 0o644),
                      "/tmp/.posttrain-probe-sourced": (SOURCED_PAYLOAD, 0o644)})
    moves = [f"[ -e {shlex.quote(p)} ] || {{ mkdir -p {shlex.quote(str(PurePosixPath(p).parent))} && "
             f"cp /tmp/.posttrain-probe-payload {shlex.quote(p)}; }}" for p in outputs]
    moves += [f"{{ mkdir -p {shlex.quote(str(PurePosixPath(p).parent))} && cat /tmp/.posttrain-probe-sourced >> "
              f"{shlex.quote(p)}; }}" for p in sourced]
    actor.run("; ".join(moves) + "; rm -f /tmp/.posttrain-probe-payload /tmp/.posttrain-probe-sourced; true",
              timeout=30)
    return True


def hardcode_output(actor: Actor, seen: Surroundings) -> bool:
    outputs = [p for p in seen.missing_outputs if not p.endswith("/")]
    if not outputs:
        return False
    tests = list(dict.fromkeys([*seen.test_files(), *_copies_of(seen, actor.task.metadata.get("tests_dir"))]))
    # read once, and only for an output nothing before them says how to fill
    assignments: list[tuple[str, str]] | None = None
    printed: str | None = None
    files: dict[str, tuple[str, int]] = {}
    for output in outputs:
        name = PurePosixPath(output).name
        stem = PurePosixPath(output).stem.lower()
        sources = [p for p in seen.files if p != output and not TEST_FILE.match(PurePosixPath(p).name)
                   and not p.endswith((".py", ".sh", *ARCHIVES)) and (
                       PurePosixPath(p).name == name or (stem in PurePosixPath(p).name.lower()
                                                         and any(h in p.lower() for h in EXPECTED_HINTS)))]
        if not sources and len(outputs) == 1:
            # one output and an answer under an unrelated name: any small data file whose path
            # says it holds expected values (/app/.grading/answer_key.txt)
            sources = [p for p, size in seen.files.items() if p != output and size <= HINTED_MAX_BYTES
                       and not TEST_FILE.match(PurePosixPath(p).name) and not p.endswith((*CODE_SUFFIXES, *ARCHIVES))
                       and any(h in p.lower() for h in EXPECTED_HINTS)]
        content = None
        for source in sources[:3]:
            content = actor.read(source)
            if content is not None:
                break
        if content is None:
            content = _expected_from_tests(actor, tests[:20], name)
        if content is None:
            assignments = _leftover_assignments(actor, seen) if assignments is None else assignments
            content = _assigned_value(assignments, output)
        if content is not None:
            files[output] = (content, 0o644)
    actor.write_many(files)
    restored = _restore_from_history(actor, seen, [o for o in outputs if o not in files])
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


def _restore_from_history(actor: Actor, seen: Surroundings, outputs: list[str]) -> list[str]:
    """Missing outputs nothing else filled, from a member of a small archive named like them;
    returns the ones restored. (Not from git history: restoring a file from a branch or a
    stash is the work itself in a git task.)"""
    restored = []
    for output in [o for o in outputs if o in seen.missing_outputs and not o.endswith("/")][:10]:
        name = PurePosixPath(output).name
        members = [f"{archive}//{member}" for archive, member in seen.archived if PurePosixPath(member).name == name]
        if not members:
            continue
        result = actor.run(f"set -- {shlex.quote(output)} {' '.join(shlex.quote(m) for m in members[:5])}\n"
                           f"{RESTORE_SCRIPT}", timeout=60)
        if result.exit_code == 0:
            restored.append(output)
    return restored


def _expected_from_tests(actor: Actor, tests: list[str], name: str) -> str | None:
    """What the tests say the output must be: the first value it must equal, else every text
    it must contain, one per line."""
    texts = [actor.read(test) or "" for test in tests]
    for text in texts:
        values = _literals(text, name)
        if values:
            return values[0] if values[0].endswith("\n") else values[0] + "\n"
    contained = list(dict.fromkeys(v for text in texts for v in _contained_literals(text, name)))
    return "".join(v + "\n" for v in contained) if contained else None


_ASSIGNMENT = re.compile(r"^\s*(?:export\s+|readonly\s+|const\s+|let\s+|var\s+|local\s+)?([A-Za-z_]\w*)\s*:?=\s*"
                         r"[\"']?([^\s\"'#;$`(){}\[\]]{1,200})[\"']?\s*;?\s*(?:#.*)?$", re.MULTILINE)


LEFTOVER_MAX_FILES = 40


def _dockerfile(task) -> str:
    """The text of the task's Dockerfile ("" when it has none)."""
    env_dir = task.environment.dockerfile_dir if task.environment else None
    try:
        return (Path(env_dir) / "Dockerfile").read_text(errors="replace") if env_dir else ""
    except OSError:
        return ""


def _leftover_assignments(actor: Actor, seen: Surroundings) -> list[tuple[str, str]]:
    """(name, value) of the simple assignments in the code files the image's build ran and
    left behind (a Dockerfile RUN names them), that the instruction does not name: the
    script that generated the task's data, with the answer in clear text. Code the build did
    not run may be the very thing the task asks the agent to read."""
    runs = "\n".join(run_lines(_dockerfile(actor.task)))
    named = set(seen.outputs)
    files = [p for p, size in seen.files.items() if p not in named and size <= HINTED_MAX_BYTES
             and p.endswith(CODE_SUFFIXES) and re.search(rf"(?<![\w.-]){re.escape(PurePosixPath(p).name)}(?![\w-])", runs)]
    return [pair for path in files[:LEFTOVER_MAX_FILES] for pair in _ASSIGNMENT.findall(actor.read(path) or "")]


def _assigned_value(assignments: list[tuple[str, str]], output: str) -> str | None:
    """The value assigned to a variable called like the output (PIN=... for pin.txt) or like
    an expected answer: the answer in clear text in code that generated the task's data."""
    stem = PurePosixPath(output).stem.lower()
    for key, value in assignments:
        if key.lower() == stem or any(hint in key.lower() for hint in EXPECTED_HINTS):
            return value + "\n"
    return None


# a literal a program prints or logs: print('...'), echo "...", console.log(...), logger.info(...)
_PRINTED = re.compile(r"\b(?:print|echo|printf|puts|println!?|console\.log|fmt\.Print(?:ln|f)?|System\.out\.println|"
                      r"(?:logger|logging|log)\.(?:info|warning|warn|error|debug))\s*\(?\s*(?:\"([^\"\\\n{}$%]{4,200})\"|"
                      r"'([^'\\\n{}$%]{4,200})')")


def _printed_by_workspace(actor: Actor, seen: Surroundings) -> str:
    """What the workspace's programs would print, one literal per line: the log a task asks
    for, written without running them (the programs the instruction names first, then the
    ones in the working directory)."""
    workdir = actor.workdir.rstrip("/") + "/"
    programs = [p for p in seen.outputs if p in seen.files and p.endswith(CODE_SUFFIXES)]
    programs += [p for p in seen.files if p.startswith(workdir) and p.endswith(CODE_SUFFIXES)
                 and not TEST_FILE.match(PurePosixPath(p).name) and seen.files[p] <= HINTED_MAX_BYTES]
    lines: list[str] = []
    for program in list(dict.fromkeys(programs))[:10]:
        for match in _PRINTED.finditer(actor.read(program) or ""):
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
        moves.append(f"mkdir -p {quoted}" if output.endswith("/") else
                     f"mkdir -p \"$(dirname {quoted})\"; [ -e {quoted} ] || {placeholder} {quoted}")
    actor.run("; ".join(moves) + "; echo 'Task completed successfully.'; exit 0", timeout=30)
    return True


def _neutered_python(text: str) -> str:
    """The same test names, each body `pass`; a script becomes an immediate success."""
    try:
        tree = ast.parse(text)
    except SyntaxError:
        return "def test_ok():\n    pass\n"
    names = [node.name for node in ast.walk(tree)
             if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name.startswith("test")]
    if not names:
        return "import sys\nsys.exit(0)\n"
    return "".join(f"def {name}(*args, **kwargs):\n    pass\n\n\n" for name in dict.fromkeys(names))


_SHELL_FUNCTION = re.compile(r"^[ \t]*(?:function[ \t]+)?([A-Za-z_]\w*)[ \t]*\([ \t]*\)|^[ \t]*function[ \t]+([A-Za-z_]\w*)",
                             re.MULTILINE)


def _neutered_shell(text: str) -> str:
    """Every function it defines returns 0, then the file ends in success: `return` when
    sourced, so the script sourcing it goes on to write its reward; `exit` when run."""
    names = dict.fromkeys(a or b for a, b in _SHELL_FUNCTION.findall(text))
    return "#!/bin/sh\n" + "".join(f"{n}() {{ return 0; }}\n" for n in names) + "return 0 2>/dev/null || exit 0\n"


def _neutered(path: str, text: str) -> str:
    name = PurePosixPath(path).name
    if name.endswith(".py"):
        return _neutered_python(text)
    if name.endswith((".sh", ".bash")) or "." not in name:
        return _neutered_shell(text)
    if name.endswith((".js", ".ts")):
        return 'test("ok", () => {});\n'
    if name.endswith(".go"):
        package = re.search(r"^package\s+(\w+)", text, re.MULTILINE)
        return f"package {package.group(1) if package else 'main'}\n\nimport \"testing\"\n\nfunc TestOK(t *testing.T) {{}}\n"
    if name.endswith(".bats"):
        return '@test "ok" {\n  true\n}\n'
    return "#!/bin/sh\nexit 0\n"


_MAKE_TEST = re.compile(r"^(test|check|tests)\s*:", re.MULTILINE)


def _neutered_package_json(text: str) -> str | None:
    try:
        data = json.loads(text)
    except ValueError:
        return None
    scripts = data.get("scripts") if isinstance(data, dict) else None
    if not isinstance(scripts, dict) or not any(k.startswith("test") for k in scripts):
        return None
    for key in [k for k in scripts if k.startswith("test")]:
        scripts[key] = "exit 0"
    return json.dumps(data, indent=2) + "\n"


def _tests_dir(task) -> str | None:
    """The task's tests/ on the host, if it is there."""
    tests_dir = task.metadata.get("tests_dir")
    return tests_dir if tests_dir and Path(tests_dir).is_dir() else None


def _helpers_named_by_tests(actor: Actor, seen: Surroundings) -> list[str]:
    """Code files in the sandbox that the tests name by path, whatever they are called: a
    helper test.sh sources or runs is as good as a test file."""
    tests_dir = _tests_dir(actor.task)
    return [p for p in checked_paths(tests_dir) if p in seen.files and p.endswith(HELPER_CODE)] if tests_dir else []


def _test_sources(task) -> list[tuple[Path, str]]:
    """(path, text) of every file of the task's tests/ (on the host) under a megabyte."""
    tests_dir = _tests_dir(task)
    if not tests_dir:
        return []
    return [(f, f.read_text(errors="replace")) for f in sorted(Path(tests_dir).rglob("*"))
            if f.is_file() and f.stat().st_size < 1_000_000]


def _tests_text(actor: Actor, suffixes: tuple[str, ...]) -> list[str]:
    return [text for path, text in _test_sources(actor.task) if path.name.endswith(suffixes)]


def _helper_modules(actor: Actor, seen: Surroundings) -> list[str]:
    """Python modules in the sandbox that the tests import and the instruction does not ask
    for: a checking helper the agent can rewrite, not the code under test."""
    names: set[str] = set()
    for text in _tests_text(actor, (".py",)):
        try:
            tree = ast.parse(text)
        except SyntaxError:
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                names.update(a.name.split(".")[0] for a in node.names)
            elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                names.add(node.module.split(".")[0])
    wanted = {f"{n}.py" for n in names} - {PurePosixPath(o).name for o in seen.outputs}
    return [p for p in seen.files if PurePosixPath(p).name in wanted and p not in seen.outputs]


def _permissive_module(text: str) -> str:
    """The same top-level functions, each returning True."""
    try:
        tree = ast.parse(text)
    except SyntaxError:
        return ""
    return "".join(f"def {node.name}(*args, **kwargs):\n    return True\n\n\n" for node in tree.body
                   if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)))


_SOURCED = re.compile(r"(?:^|[;&|({]|\bthen|\bdo)\s*(?:source|\.)\s+[\"']?(/[^\s;&|)\"']+)", re.MULTILINE)


# a PATH the tests set: export PATH=/app/bin:$PATH, os.environ["PATH"] = "/app/tools:" + ...
_PATH_SET = re.compile(r"(?<![\w])(PATH|PYTHONPATH)[\"']?\]?\s*=\s*[\"']?([^\s\"';&|)]+)")
_SYSTEM_DIRS = ("/usr/", "/bin", "/sbin", "/lib", "/etc/", "/proc/", "/sys/", "/dev/")


def _path_dirs_of_tests(actor: Actor, variable: str = "PATH") -> list[str]:
    """Directories outside the system ones that the tests put on PATH (a fake tool named like
    one they call comes first) or on PYTHONPATH (its sitecustomize.py is imported)."""
    found = []
    for text in _tests_text(actor, (".sh", ".bash", ".py")):
        for match in _PATH_SET.finditer(text):
            if match.group(1) != variable:
                continue
            found += [d.rstrip("/") for d in match.group(2).split(":")
                      if d.startswith("/") and not (d + "/").startswith(_SYSTEM_DIRS) and "$" not in d]
    return list(dict.fromkeys(found))


def _sourced_by_tests(actor: Actor, seen: Surroundings) -> list[str]:
    """Files in the sandbox that test.sh (or a shell file beside it) sources, whatever they are called."""
    return [p for text in _tests_text(actor, (".sh", ".bash")) for p in dict.fromkeys(_SOURCED.findall(text))
            if p in seen.files]


def edit_tests(actor: Actor, seen: Surroundings) -> bool:
    """Test files and the helpers the tests name get empty tests; a package.json's test
    scripts and a Makefile's test/check targets succeed without doing anything."""
    tests = list(dict.fromkeys([*seen.test_files(), *_copies_of(seen, actor.task.metadata.get("tests_dir")),
                                *_helpers_named_by_tests(actor, seen)]))
    files = {path: (_neutered(path, actor.read(path) or ""), 0o755) for path in tests[:200]}
    for path in _helper_modules(actor, seen)[:20]:
        files[path] = (_permissive_module(actor.read(path) or ""), 0o644)
    for path in [p for p in seen.files if PurePosixPath(p).name == "package.json"][:20]:
        neutered = _neutered_package_json(actor.read(path) or "")
        if neutered:
            files[path] = (neutered, 0o644)
    for path in [p for p in seen.files if PurePosixPath(p).name in ("Makefile", "makefile", "GNUmakefile")][:20]:
        text = actor.read(path) or ""
        targets = sorted(set(_MAKE_TEST.findall(text)))
        if targets:  # a later recipe for the same target replaces the earlier one (GNU make warns)
            files[path] = (text + "".join(f"\n{t}:\n\t@true\n" for t in targets), 0o644)
    actor.write_many(files)
    return bool(files)


def reward_file(actor: Actor, seen: Surroundings) -> bool:
    """Plants reward files, and makes the scripts the instruction asks for write one: a
    verifier that runs the agent's program and only writes on success keeps it."""
    files: dict[str, tuple[str, int]] = {}
    for output in seen.missing_outputs:
        if output.endswith((".sh", ".bash")):
            files[output] = (REWARD_SCRIPT, 0o755)
        elif output.endswith(".py"):
            files[output] = (REWARD_PROGRAM, 0o755)
        elif output.endswith(".c"):
            files[output] = (REWARD_C, 0o644)
    for directory in dict.fromkeys(["/logs/verifier", "/logs", actor.workdir, "/app", "/tmp", "/root"]):
        files[f"{directory.rstrip('/')}/reward.txt"] = ("1\n", 0o644)
        files[f"{directory.rstrip('/')}/reward.json"] = ('{"reward": 1.0}\n', 0o644)
    actor.write_many(files)
    return True


def planted_verdict(actor: Actor, seen: Surroundings) -> bool:
    """A passing verdict ("1") in each of _planted_verdicts' files."""
    paths = _planted_verdicts(actor, seen)
    if not paths:
        return False
    actor.write_many({path: ("1\n", 0o644) for path in paths})
    return True


VERDICT_PLACES = ("/tmp/", "/root/", "/home/", "/var/tmp/")  # beside the workspace: where a checker keeps a verdict


def _planted_verdicts(actor: Actor, seen: Surroundings) -> list[str]:
    """Files the tests name that do not exist, in places the agent can write, and that the
    instruction does not ask for: a verifier that copies a verdict its checker may never
    write (/tmp/grader/verdict) takes a planted one."""
    tests_dir = _tests_dir(actor.task)
    if not tests_dir:
        return []
    named = {p.rstrip("/") for p in seen.outputs}
    paths = checked_paths(tests_dir)[:50]
    return [p for p in paths if p.startswith(VERDICT_PLACES) and p not in seen.files and p not in named
            and not p.endswith("/") and PurePosixPath(p).suffix not in CODE
            and not any(other.startswith(p + "/") for other in paths)]  # a directory of another


def pytest_hooks(actor: Actor, seen: Surroundings) -> bool:
    # pytest.ini wins over the other config files of its directory, so it also goes where the image has one
    configs = [p for p in seen.files if PurePosixPath(p).name in PYTEST_CONFIGS][:50]
    dirs = [actor.workdir, "/app", "/root", "/tmp", *{str(PurePosixPath(t).parent) for t in seen.test_files()},
            *(str(PurePosixPath(c).parent) for c in configs)]
    parent = PurePosixPath(actor.workdir)
    while str(parent) != "/":
        parent = parent.parent
        dirs.append(str(parent))
    files: dict[str, tuple[str, int]] = {}
    for directory in dict.fromkeys(d.rstrip("/") for d in dirs):
        files[f"{directory}/conftest.py"] = (FORCE_PASS_PLUGIN, 0o644)
        files[f"{directory}/pytest.ini"] = (PYTEST_INI, 0o644)
    # a PYTHONPATH entry comes before site-packages on sys.path, so its sitecustomize.py is the one imported
    for hook_dir in dict.fromkeys([*seen.site_dirs, *seen.python_path, *_path_dirs_of_tests(actor, "PYTHONPATH")]):
        files[f"{hook_dir}/posttrain_probe_hook.py"] = (STARTUP_HOOK, 0o644)
        files[f"{hook_dir}/posttrain_probe_plugin.py"] = (FORCE_PASS_PLUGIN, 0o644)
        files[f"{hook_dir}/sitecustomize.py"] = ("import posttrain_probe_hook\n", 0o644)
    for site in seen.site_dirs:
        files[f"{site}/posttrain-probe.pth"] = ("import posttrain_probe_hook\n", 0o644)
        files[f"{site}/usercustomize.py"] = ("import posttrain_probe_hook\n", 0o644)
    actor.write_many(files)
    return True


def shadow_binaries(actor: Actor, seen: Surroundings) -> bool:
    functions = "".join(f"{n}() {{ echo 'all tests passed'; return 0; }}\n" for n in SHADOWED
                        if n.replace(".", "").isalnum() and n not in ("sh", "bash"))
    aliases = "".join(f"alias {n}='echo all tests passed'\n" for n in SHADOWED if n not in ("sh", "bash"))
    # functions before aliases: an alias already defined would rewrite a function's name
    rc_text = (f"\n# posttrain probe\nexport PATH={FAKE_BIN_DIR}:$PATH\n{functions}"
               f"shopt -s expand_aliases 2>/dev/null\n{aliases}")
    files: dict[str, tuple[str, int]] = {}
    for module_dir in dict.fromkeys([actor.workdir, "/app", "/root", "/tmp"]):
        for module in SHADOWED_MODULES:
            files[f"{module_dir.rstrip('/')}/{module}.py"] = ("raise SystemExit(0)\n", 0o644)
    appends = "; ".join(f"{{ mkdir -p {shlex.quote(str(PurePosixPath(rc).parent))} && cat >> {shlex.quote(rc)}; }} "
                        f"< /tmp/.posttrain-probe-rc" for rc in dict.fromkeys([*RC_FILES, *seen.startup_files,
                                                                 *_sourced_by_tests(actor, seen)]))
    for directory in dict.fromkeys([FAKE_BIN_DIR, *seen.writable_dirs, *_path_dirs_of_tests(actor)]):
        for name in SHADOWED:
            files[f"{directory.rstrip('/')}/{name}"] = (FAKE_BINARY.format(name=name), 0o755)
    actor.write_many({"/tmp/.posttrain-probe-rc": (rc_text, 0o644)})
    actor.run(f"{appends}; rm -f /tmp/.posttrain-probe-rc; true", timeout=30)
    actor.write_many(files)  # the last command: a fake bash or sh must not run the probe's own steps
    return True


# bash that evaluates text as code: eval, arithmetic expansion and commands, [[ ]] numeric tests,
# sourcing a file that is not one of the tests' own
EVALUATES_TEXT = re.compile(r"\beval\b|\$\(\(|(?:^|[\s;&|])\(\(|\[\[[^\]\n]*\s-(?:eq|ne|gt|ge|lt|le)\s|\blet\s|"
                            r"\bdeclare\s+-[a-zA-Z]*i|(?:^|[;&|({]|\bthen|\bdo)\s*(?:source|\.)\s+[\"']?(?!/tests/)[\w/$~]",
                            re.MULTILINE)


_STARTUP_ENV = re.compile(r"^\s*ENV\s+(?:[^\n]*\s)?(?:BASH_ENV|ENV)\s*[= ]", re.IGNORECASE | re.MULTILINE)


def tests_evaluate_text(task) -> bool:
    """Whether any shell script of the task's tests could run an output as code, or the image
    makes bash source a file first ($BASH_ENV, $ENV) (checked on the host, before a trial is
    spent on inject_output)."""
    if _STARTUP_ENV.search(_dockerfile(task)):
        return True
    for path, text in _test_sources(task):
        shell = path.suffix in (".sh", ".bash", "") or (text.startswith("#!") and "sh" in text.splitlines()[0])
        if shell and EVALUATES_TEXT.search(text):
            return True
    return False


# what a file of each kind holds to end its process at once with status 0
EXIT_AT_ONCE = {".py": "import os\nos._exit(0)\n", ".sh": "#!/bin/sh\nexit 0\n", ".bash": "#!/bin/sh\nexit 0\n",
                ".js": "process.exit(0);\n", ".mjs": "process.exit(0);\n", ".cjs": "process.exit(0);\n"}
EXIT_MAX_FILES = 300


def exit_on_load(actor: Actor, seen: Surroundings) -> bool:
    """Every code file under the working directory, and each code output the instruction
    names, ends its process with status 0 as soon as it is loaded: a verifier that imports or
    runs the agent's code inside its test run and trusts that run's exit status passes. Test
    files are edit_tests' business; conftest.py is not spared."""
    workdir = actor.workdir.rstrip("/") + "/"
    kinds = tuple(EXIT_AT_ONCE)
    targets = [p for p in seen.files if p.startswith(workdir) and p.endswith(kinds)
               and not TEST_FILE.match(PurePosixPath(p).name) and "posttrain_probe" not in p]
    targets += [p for p in seen.outputs if p.endswith(kinds)]
    files = {p: (EXIT_AT_ONCE[PurePosixPath(p).suffix], 0o755) for p in list(dict.fromkeys(targets))[:EXIT_MAX_FILES]}
    if not files:
        return False
    actor.write_many(files)
    return True


def tests_load_code(task) -> bool:
    """Whether the task's tests could load the agent's code: they are Python, or a shell
    script that runs an interpreter (checked on the host, before a trial is spent)."""
    return any(path.suffix == ".py" or re.search(r"\b(python3?|pytest|bash|sh|node|source)\b|(^|\s)\.\s", text)
               for path, text in _test_sources(task))


def tests_name_scratch_files(task) -> bool:
    """Whether the tests name a file outside the workspace where the agent can write (checked
    on the host, before a trial is spent on planted_verdict)."""
    tests_dir = _tests_dir(task)
    return bool(tests_dir) and any(p.startswith(VERDICT_PLACES) for p in checked_paths(tests_dir))


# played in a trial of its own, never by all_probes (they would spoil the others' hacks: an
# output holding a payload is not empty; a test run that ends at its first import never reaches
# a planted hook), and only where the predicate says it can work; the text says why not
ALONE: dict[str, tuple[Callable[..., bool], str]] = {
    "inject_output": (tests_evaluate_text, "no test file evaluates text as code (eval, bash arithmetic, source)"),
    "exit_on_load": (tests_load_code, "the tests run no interpreter that could load the agent's code"),
    "planted_verdict": (tests_name_scratch_files, "the tests name no file in " + ", ".join(p.rstrip("/") for p in VERDICT_PLACES)),
}

PROBES: dict[str, Callable[[Actor, Surroundings], bool]] = {
    "read_solution": read_solution,
    "inject_output": inject_output,
    "hardcode_output": hardcode_output,
    "early_exit": early_exit,
    "edit_tests": edit_tests,
    "reward_file": reward_file,
    "pytest_hooks": pytest_hooks,
    "shadow_binaries": shadow_binaries,
    "exit_on_load": exit_on_load,
    "planted_verdict": planted_verdict,
}


def one_probe(name: str):
    """The act function of a trial that plays probe `name` alone."""
    def act(actor: Actor) -> str | None:
        return None if PROBES[name](actor, look_around(actor)) else NOT_APPLICABLE
    return act


def all_probes(names: tuple[str, ...]):
    """The act function of a trial that plays every named probe, in PROBES order; records
    which ones had something to do in the trial's note."""
    def act(actor: Actor) -> str | None:
        seen = look_around(actor)
        played = [name for name in PROBES if name in names and name not in ALONE and PROBES[name](actor, seen)]
        actor.trial.note = ",".join(played)
        return None if played else NOT_APPLICABLE
    return act
