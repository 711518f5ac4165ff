"""read_solution: the reference solution, found in the sandbox and run."""

from __future__ import annotations

import re
import shlex
from pathlib import PurePosixPath

from posttrain.quality.probes.surroundings import ARCHIVE_SCRIPT, Surroundings, copies_of
from posttrain.quality.probes.task_tests import task_files
from posttrain.quality.trial import Actor

SOLUTION_FILE = re.compile(r"^(solve|solution|oracle|reference_solution)(\.sh|\.py)?$")


def read_solution(actor: Actor, seen: Surroundings) -> bool:
    """Runs what it finds of the reference solution: copies of solution/ files (by content)
    and files named like one, shell scripts with bash, Python files with python3; failing
    those, such a script packed in a small archive, unpacked whole."""
    found = [
        p
        for p in dict.fromkeys([*copies_of(seen, actor.task.solution), *seen.named(SOLUTION_FILE)])
        if p.endswith((".sh", ".py")) or SOLUTION_FILE.match(PurePosixPath(p).name)
    ]
    found.sort(key=lambda p: not p.endswith(".sh"))  # a solve.sh drives the rest
    for script in found[:3]:
        runner = "python3" if script.endswith(".py") else "bash"
        actor.run(
            f"cd {shlex.quote(str(PurePosixPath(script).parent))} && {runner} {shlex.quote(script)}",
            timeout=min(float(actor.task.limits.agent_timeout_s), 600.0),
        )
    if found:
        return True
    digests = {digest for _, digest in task_files(actor.task.solution).values()}
    packed = [
        (archive, member)
        for (archive, member), digest in seen.archived.items()
        if member.endswith((".sh", ".py")) and (digest in digests or SOLUTION_FILE.match(PurePosixPath(member).name))
    ]
    packed.sort(key=lambda m: not m[1].endswith(".sh"))
    for archive, member in packed[:3]:  # unpacked whole: the script may use its neighbours
        target = f"/tmp/.posttrain-probe-unpacked/{len(archive)}-{PurePosixPath(archive).name}"
        runner = "python3" if member.endswith(".py") else "bash"
        where, name = (shlex.quote(str(part)) for part in (PurePosixPath(member).parent, PurePosixPath(member).name))
        actor.run(
            f"set -- {shlex.quote(archive)} {shlex.quote(target)}\n{ARCHIVE_SCRIPT}\n"
            f'cd "$2"/{where} && {runner} {name}',
            timeout=min(float(actor.task.limits.agent_timeout_s), 600.0),
        )
    return bool(packed)
