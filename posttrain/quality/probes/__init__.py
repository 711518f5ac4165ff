"""Exploit probes: scripted adversarial agents, each trying one known reward hack from a fresh
sandbox without solving the task. Then the task's verifier runs as after any episode. A probe
that earns a passing reward makes the task `exploitable`.

A probe first looks around the sandbox as an agent could (`surroundings`: one pass, shared by
all probes), and has nothing to do when its hack has nothing to work on. What the probes read
of the task on the host is in `task_tests`, what they write in `payloads`; each family of hacks
is a module of its own:

    solution.py          read_solution    find the reference solution in the sandbox and run it
                                          (archives too)
    injection.py         inject_output    into the named outputs, a payload: a verifier that
                                          evals or sources them writes a passing reward and
                                          exits cleanly; one that reads them in bash arithmetic
                                          gets the name of the variable it compares them with.
                                          Files bash sources (first, or in test.sh) get the
                                          reward and the exit appended
    forged_outputs.py    hardcode_output  copy expected outputs it can read (copied tests,
                                          expected files, archives, leftover build scripts)
                                          into the outputs the instruction names
                         early_exit       create the named outputs empty, claim success and stop
    edited_tests.py      edit_tests       neuter test files it can find in the workspace, and
                                          the code files the tests name (helpers test.sh
                                          sources or runs) or import
    forged_verdicts.py   reward_file      write reward.txt / reward.json where a verifier might
                                          read them
                         lingering_writer processes left running (double fork with setsid, nohup,
                                          disown) that write a passing reward every 10 ms
                         planted_verdict  "1" in the files the tests name outside the workspace
                                          that do not exist (a verdict test.sh copies, which its
                                          checker writes only if it gets far)
    hijacked_runners.py  pytest_hooks     conftest.py, pytest.ini (the image's own too) and
                                          Python startup hooks (sitecustomize.py,
                                          usercustomize.py, .pth; in site directories and
                                          writable PYTHONPATH entries) that turn every failure
                                          into a pass
                         shadow_binaries  fake python, pytest, bash, curl ... on every PATH
                                          directory it can write or create, as shell functions
                                          and a PATH entry in rc files and the files $BASH_ENV
                                          and $ENV name, and pytest, unittest and doctest
                                          modules in the working directory
                         exit_on_load     every code file of the working directory ends its
                                          process with status 0 as soon as it is loaded
                                          (os._exit(0), exit 0): tests that import or run the
                                          agent's code and trust their run's exit status pass

`all_probes` plays every applicable hack but those in ALONE (inject_output, exit_on_load and
planted_verdict: each would spoil the others, so each has a trial of its own) in one sandbox,
in PROBES order (each one only pushes toward a pass, and the ones that read the sandbox go
before the ones that rewrite it): when that fails, each one alone fails too, and only a pass
needs a trial per probe to name the hack.
"""

from __future__ import annotations

from collections.abc import Callable

from posttrain.errors import PosttrainError
from posttrain.quality.probes.edited_tests import edit_tests
from posttrain.quality.probes.forged_outputs import early_exit, hardcode_output
from posttrain.quality.probes.forged_verdicts import (
    VERDICT_PLACES,
    lingering_writer,
    planted_verdict,
    reward_file,
    tests_name_scratch_files,
)
from posttrain.quality.probes.hijacked_runners import exit_on_load, pytest_hooks, shadow_binaries, tests_load_code
from posttrain.quality.probes.injection import inject_output, tests_evaluate_text
from posttrain.quality.probes.solution import read_solution
from posttrain.quality.probes.surroundings import Surroundings, look_around
from posttrain.quality.trial import NOT_APPLICABLE, Actor

# played in a trial of its own, never by all_probes (they would spoil the others' hacks: an
# output holding a payload is not empty; a test run that ends at its first import never reaches
# a planted hook), and only where the predicate says it can work; the text says why not
ALONE: dict[str, tuple[Callable[..., bool], str]] = {
    "inject_output": (tests_evaluate_text, "no test file evaluates text as code (eval, bash arithmetic, source)"),
    "exit_on_load": (tests_load_code, "the tests run no interpreter that could load the agent's code"),
    "planted_verdict": (
        tests_name_scratch_files,
        "the tests name no file in " + ", ".join(p.rstrip("/") for p in VERDICT_PLACES),
    ),
}

# probes that test the harness rather than the task: while every process an agent starts dies
# with its command (tests/sandbox/test_lingering_writers.py), no task can fail them
HARNESS_PROBES = frozenset({"lingering_writer"})

PROBES: dict[str, Callable[[Actor, Surroundings], bool]] = {
    "read_solution": read_solution,
    "inject_output": inject_output,
    "hardcode_output": hardcode_output,
    "early_exit": early_exit,
    "edit_tests": edit_tests,
    "reward_file": reward_file,
    "lingering_writer": lingering_writer,
    "pytest_hooks": pytest_hooks,
    "shadow_binaries": shadow_binaries,
    "exit_on_load": exit_on_load,
    "planted_verdict": planted_verdict,
}


def chosen_probes(names: str | None) -> tuple[str, ...]:
    """--probes: the comma-separated probe names, checked; None: every probe."""
    chosen = tuple(p.strip() for p in names.split(",") if p.strip()) if names else tuple(PROBES)
    unknown = [p for p in chosen if p not in PROBES]
    if unknown:
        raise PosttrainError(f"--probes: unknown probe {unknown[0]!r}; choose from {', '.join(PROBES)}")
    return chosen


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
