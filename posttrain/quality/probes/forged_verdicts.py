"""Forged verdicts: reward_file writes the reward files a verifier might read (and makes the
programs the instruction asks for write one); lingering_writer leaves processes behind that keep
writing a passing reward while the verifier runs; planted_verdict writes a passing verdict where
the tests look for one their checker may never write."""

from __future__ import annotations

from pathlib import PurePosixPath

from posttrain.quality.probes.payloads import REWARD_C, REWARD_PROGRAM, REWARD_SCRIPT
from posttrain.quality.probes.surroundings import CODE, Surroundings
from posttrain.quality.probes.task_tests import host_tests_dir
from posttrain.quality.task_paths import checked_paths
from posttrain.quality.trial import Actor

VERDICT_PLACES = ("/tmp/", "/root/", "/home/", "/var/tmp/")  # beside the workspace: where a checker keeps a verdict


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


# a passing reward into /logs/verifier every 10 ms, forever: the verifier's wipe and test.sh's own
# write come and go, and whatever is read last is the loop's
_WRITER = "while :; do mkdir -p /logs/verifier; echo 1 > /logs/verifier/reward.txt; sleep 0.01; done"
LINGERING = {  # how a process outlives the command that started it
    "double_fork_setsid": f"( setsid bash -c '{_WRITER}' >/dev/null 2>&1 & )",
    "nohup": f"nohup bash -c '{_WRITER}' >/dev/null 2>&1 &",
    "disown": f"bash -c '{_WRITER}' >/dev/null 2>&1 & disown",
}


def lingering_writer(actor: Actor, seen: Surroundings) -> bool:
    """Leaves reward writers running (double fork with setsid, nohup, disown): a harness whose
    sandbox lets a process outlive its command, or runs the verifier beside what the agent
    left, takes their reward."""
    actor.run("\n".join([*LINGERING.values(), "true"]), timeout=30)
    return True


def planted_verdict(actor: Actor, seen: Surroundings) -> bool:
    """A passing verdict ("1") in each of _planted_verdicts' files."""
    paths = _planted_verdicts(actor, seen)
    if not paths:
        return False
    actor.write_many({path: ("1\n", 0o644) for path in paths})
    return True


def _planted_verdicts(actor: Actor, seen: Surroundings) -> list[str]:
    """Files the tests name that do not exist, in places the agent can write, and that the
    instruction does not ask for: a verifier that copies a verdict its checker may never
    write (/tmp/grader/verdict) takes a planted one."""
    tests_dir = host_tests_dir(actor.task)
    if not tests_dir:
        return []
    named = {p.rstrip("/") for p in seen.outputs}
    paths = checked_paths(tests_dir)[:50]
    return [
        p
        for p in paths
        if p.startswith(VERDICT_PLACES)
        and p not in seen.files
        and p not in named
        and not p.endswith("/")
        and PurePosixPath(p).suffix not in CODE
        and not any(other.startswith(p + "/") for other in paths)
    ]  # a directory of another


def tests_name_scratch_files(task) -> bool:
    """Whether the tests name a file outside the workspace where the agent can write (checked
    on the host, before a trial is spent on planted_verdict)."""
    tests_dir = host_tests_dir(task)
    return bool(tests_dir) and any(p.startswith(VERDICT_PLACES) for p in checked_paths(tests_dir))
