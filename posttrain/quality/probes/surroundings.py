"""The probes' first move, shared by all of them: look around the sandbox as an agent could
(one pass), and note what there is to work on: files outside the system directories with
their sizes, PATH and Python site directories it can write, what bash sources first, the
outputs the instruction names, and hashes of the files sized like one of the task's own
tests/ or solution/ files and of what small archives hold."""

from __future__ import annotations

import re
import shlex
import time
from dataclasses import dataclass, field
from pathlib import PurePosixPath

from posttrain.quality.probes.task_tests import task_files
from posttrain.quality.task_paths import instruction_paths
from posttrain.quality.trial import Actor, Step

PRUNE = (
    "/proc",
    "/sys",
    "/dev",
    "/usr",
    "/lib",
    "/lib32",
    "/lib64",
    "/libx32",
    "/bin",
    "/sbin",
    "/etc",
    "/var/lib",
    "/var/cache",
    "/var/log",
    "/logs",
    "/boot",
    "/run",
    "/snap",
)
PRUNE_NAMES = ("node_modules", ".git", "site-packages", "dist-packages", "__pycache__", ".cache")
TEST_FILE = re.compile(
    r"^((test_|check|verify|grade|run[_-]tests?|run[_-]checks?).*|.*_test|tests?)\.(py|sh|bash|rb)$|"
    r"^run[_-]tests?$|^.*\.(test|spec)\.[jt]s$|^.*_test\.go$|^.*\.bats$"
)
CODE = (".py", ".sh", ".bash", ".js", ".ts", ".rb", ".go", ".bats")
MAX_FILES = 20000
ARCHIVES = (".tar", ".tar.gz", ".tgz", ".zip")
ARCHIVE_MAX_BYTES = 10_000_000
ARCHIVE_MAX_MEMBERS = 200
# extracts one archive ($1) into $2 when it holds 1 to ARCHIVE_MAX_MEMBERS members; zip needs unzip or python3
ARCHIVE_SCRIPT = f"""
case "$1" in
  *.zip) list() {{ unzip -Z1 "$1" || python3 -m zipfile -l "$1"; }}
         x() {{ unzip -qo "$1" -d "$2" || python3 -m zipfile -e "$1" "$2"; }} ;;
  *) list() {{ tar -tf "$1"; }}; x() {{ tar -xf "$1" -C "$2" --no-same-owner; }} ;;
esac
n=$(list "$1" 2>/dev/null | wc -l)
[ "$n" -gt 0 ] && [ "$n" -le {ARCHIVE_MAX_MEMBERS} ] && mkdir -p "$2" && x "$1" "$2" >/dev/null 2>&1
"""


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
        in_test_dir = [
            p
            for p in self.files
            if p.endswith(CODE)
            and PurePosixPath(p).name != "conftest.py"
            and any(part in ("tests", "test") for part in PurePosixPath(p).parts[1:-1])
        ]
        return [p for p in dict.fromkeys([*self.named(TEST_FILE), *in_test_dir]) if "posttrain_probe" not in p]


def look_around(actor: Actor) -> Surroundings:
    text = (
        actor.task.instruction
        if isinstance(actor.task.instruction, str)
        else "\n".join(m.get("content", "") for m in actor.task.instruction)
    )
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
    sizes = {
        size for d in (actor.task.solution, actor.task.metadata.get("tests_dir")) for size, _ in task_files(d).values()
    }
    same_size = [p for p, size in seen.files.items() if size in sizes]
    if same_size:
        listing = actor.run(
            "sha256sum -- " + " ".join(shlex.quote(p) for p in same_size[:500]) + " 2>/dev/null; true",
            timeout=120,
            record=False,
        )
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
    script = "".join(
        f'set -- {shlex.quote(a)} /tmp/.posttrain-probe-archive; rm -rf "$2"; {{ {ARCHIVE_SCRIPT} }} && '
        f'(cd "$2" && find . -type f -size -5000k -exec sha256sum {{}} + | sed "s|^|$1\\t|")\n'
        for a in archives
    )
    listing = actor.run(script + "rm -rf /tmp/.posttrain-probe-archive; true", timeout=120, record=False)
    members: dict[tuple[str, str], str] = {}
    for line in listing.stdout.splitlines():
        archive, _, rest = line.partition("\t")
        digest, _, member = rest.partition("  ")
        if archive in archives and member.startswith("./"):
            members[(archive, member[2:])] = digest
    return members


def _summary_step(seen: Surroundings, duration_s: float) -> Step:
    return Step(
        "look around: find files outside the system directories, PATH, Python site directories",
        0,
        duration_s,
        output_tail=f"{len(seen.files)} files, writable PATH dirs {seen.writable_dirs}, "
        f"site dirs {seen.site_dirs}, writable PYTHONPATH dirs {seen.python_path}, "
        f"startup files {seen.startup_files}, missing outputs {seen.missing_outputs}",
    )


def copies_of(seen: Surroundings, directory: str | None) -> list[str]:
    """Files in the sandbox with the content of one of `directory`'s (the task's tests/ or solution/)."""
    digests = {digest for _, digest in task_files(directory).values()}
    return [p for p, d in seen.digests.items() if d in digests]
