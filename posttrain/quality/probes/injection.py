"""inject_output: an output (or a file bash sources first) that the verifier runs as code, or
reads in bash arithmetic, holds a passing reward and a clean exit. Played alone, and only where
`tests_evaluate_text` finds a test script that could run it."""

from __future__ import annotations

import re
import shlex
from pathlib import PurePosixPath

from posttrain.quality.dockerfiles import task_dockerfile
from posttrain.quality.probes.payloads import INJECTION, SOURCED_PAYLOAD
from posttrain.quality.probes.surroundings import Surroundings
from posttrain.quality.probes.task_tests import sourced_by_tests, sources_of_tests, tests_text
from posttrain.quality.trial import Actor

# bash that evaluates text as code: eval, arithmetic expansion and commands, [[ ]] numeric tests,
# sourcing a file that is not one of the tests' own
EVALUATES_TEXT = re.compile(
    r"\beval\b|\$\(\(|(?:^|[\s;&|])\(\(|\[\[[^\]\n]*\s-(?:eq|ne|gt|ge|lt|le)\s|\blet\s|"
    r"\bdeclare\s+-[a-zA-Z]*i|(?:^|[;&|({]|\bthen|\bdo)\s*(?:source|\.)\s+[\"']?(?!/tests/)[\w/$~]",
    re.MULTILINE,
)


def tests_evaluate_text(task) -> bool:
    """Whether any shell script of the task's tests could run an output as code, or the image
    makes bash source a file first ($BASH_ENV, $ENV) (checked on the host, before a trial is
    spent on inject_output)."""
    dockerfile = task_dockerfile(task)
    if dockerfile and {"BASH_ENV", "ENV"} & set(dockerfile.env):
        return True
    for path, text in sources_of_tests(task):
        shell = path.suffix in (".sh", ".bash", "") or (text.startswith("#!") and "sh" in text.splitlines()[0])
        if shell and EVALUATES_TEXT.search(text):
            return True
    return False


_COMPARED = re.compile(
    r"\$\{?([A-Za-z_]\w*)\}?(?=\s*(?:-eq|-ne|-lt|-le|-gt|-ge|==|!=))|"
    r"(?:-eq|-ne|-lt|-le|-gt|-ge|==|!=)\s*\$\{?([A-Za-z_]\w*)"
)


def _compared_variable(actor: Actor) -> str | None:
    """For a test.sh that reads an output in bash arithmetic (and evals or sources nothing):
    the name of the variable it compares the output with, which arithmetic expands to the
    expected value (`[ $(( got )) -eq $want ]` with got="want"). None otherwise."""
    texts = tests_text(actor.task, (".sh", ".bash"))
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
    sourced = list(dict.fromkeys([*seen.startup_files, *(p for p in sourced_by_tests(actor.task) if p in seen.files)]))
    if not outputs and not sourced:
        return False
    payload = _compared_variable(actor) or INJECTION
    actor.write_many(
        {
            "/tmp/.posttrain-probe-payload": (payload + "\n", 0o644),
            "/tmp/.posttrain-probe-sourced": (SOURCED_PAYLOAD, 0o644),
        }
    )
    # an output that exists by the time the moves run is left as it is
    moves = [
        f"[ -e {shlex.quote(p)} ] || {{ mkdir -p {shlex.quote(str(PurePosixPath(p).parent))} && "
        f"cp /tmp/.posttrain-probe-payload {shlex.quote(p)}; }}"
        for p in outputs
    ]
    moves += [
        f"{{ mkdir -p {shlex.quote(str(PurePosixPath(p).parent))} && cat /tmp/.posttrain-probe-sourced >> "
        f"{shlex.quote(p)}; }}"
        for p in sourced
    ]
    actor.run(
        "; ".join(moves) + "; rm -f /tmp/.posttrain-probe-payload /tmp/.posttrain-probe-sourced; true", timeout=30
    )
    return True
