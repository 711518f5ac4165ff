"""Execution checks: what running the task says about it.

    oracle     the reference solution passes, within the task's own time and memory limits
    nop        doing nothing fails
    repeats    the verifier says the same over R runs of each
    network    a task that disallows the network does not need it
    deps       the packages the Dockerfile installs are there

The decisions are pure functions of the trials, so they can be tested on recorded evidence.
"""

from __future__ import annotations

import re
import shlex
from pathlib import Path, PurePosixPath

from posttrain.agent.policies import solution_command
from posttrain.quality.dockerfiles import parsed_dockerfile, run_commands
from posttrain.quality.install_commands import installed_packages
from posttrain.quality.trial import Actor, Trial
from posttrain.quality.verdicts import FAIL, PASS, SKIP, WARN, Check

NETWORK_ERRORS = re.compile(
    r"Could not resolve host|Temporary failure in name resolution|Network is unreachable|No route to host|"
    r"Failed to establish a new connection|Name or service not known|getaddrinfo failed|NewConnectionError|"
    r"urlopen error|unable to access 'https?://|Could not connect to|Connection timed out|"
    r"Failed to fetch|Cannot initiate the connection",
    re.IGNORECASE,
)
NETWORK_COMMANDS = re.compile(
    r"\b(curl|wget)\b[^\n]*\b(https?|ftp)://|\b(pip3?|uv pip|python3? -m pip)\s+install\b(?![^\n]*--no-index)|"
    r"\bapt(-get)?\s+(install|update)\b|\bgit\s+(clone|fetch|pull)\b[^\n]*(https?://|git@)|"
    r"\b(npm|yarn|pnpm)\s+(install|add|ci)\b|\buv\s+(sync|add|run --with)\b|\buvx\b|\bgo\s+(get|mod download)\b|"
    r"\bcargo\s+(install|fetch)\b"
)
MISSING_COMMAND = re.compile(r"(?:^|\n)(?:[^\n]*?: )?(?:line \d+: )?([\w.+-]+): (?:command )?not found")
# bash running a system command by absolute path the image does not have
MISSING_PATH_COMMAND = re.compile(
    r"(?:^|\n)[^\n]*?: line \d+: (/(?:usr|bin|sbin)/[\w./+-]+): No such file or directory"
)
MISSING_MODULE = re.compile(r"No module named '?([\w.]+)'?")
SHELL_SYNTAX = re.compile(r"syntax error|unexpected end of file|unexpected EOF", re.IGNORECASE)
# the verifier broke, whatever the solution did: its own files missing, no test run, pytest crashing
VERIFIER_CRASH = re.compile(
    r"ERROR: file or directory not found: /tests|ERROR: file not found: /tests|no tests ran|collected 0 items|"
    r"INTERNALERROR|can't open file '/tests/|/tests/[^\s:'\"]*: No such file or directory|"
    r"/tests/[^\s:'\"]*: Permission denied"
)
# bash failing on the task's own test scripts at run time (set -u, bad expansions): errors of the
# script itself, not of the data it checks, so the verifier breaks whatever state it looks at
VERIFIER_SCRIPT_ERROR = re.compile(
    r"/tests/[^\s:]+: line \d+: [^\n]*(unbound variable|bad substitution|ambiguous redirect|bad array subscript|"
    r"readonly variable)"
)


def run_oracle(actor: Actor, timeout_s: float) -> str | None:
    """Copy solution/ in and run solve.sh (one command: the copy is a tar on its stdin)."""
    actor.run_with_files(Path(actor.task.solution), "/solution", solution_command(actor.task), timeout=timeout_s)
    return None


def run_nothing(actor: Actor) -> str | None:
    return None


def _outputs(trial: Trial) -> str:
    parts = [s.output_tail for s in trial.steps]
    parts += [str(trial.verifier.get(k, "")) for k in ("stdout_tail", "stderr_tail", "error")]
    return "\n".join(p for p in parts if p)


def _verifier_broken(trial: Trial) -> str | None:
    """Why the verifier itself failed in this trial (not the task's checks), or None."""
    details = trial.verifier
    if trial.error:
        return f"the trial failed: {trial.error}"
    if details.get("timed_out"):
        return "test.sh ran past the verifier timeout"
    stderr = str(details.get("stderr_tail", ""))
    if details.get("exit_code") == 2 and SHELL_SYNTAX.search(stderr):
        return f"test.sh does not parse: {stderr.strip()[-200:]}"
    crash = VERIFIER_CRASH.search(stderr + "\n" + str(details.get("stdout_tail", "")))
    if crash:
        return f"the tests did not run: {crash.group(0)!r}"
    script_error = VERIFIER_SCRIPT_ERROR.search(stderr)
    if script_error:
        return f"test.sh fails at run time: {script_error.group(0)!r}"
    if details.get("reward_file") and details.get("error"):
        return details["error"]
    if details.get("reward_file") is None and details.get("exit_code") == 0:
        return "test.sh exited 0 without writing /logs/verifier/reward.txt or reward.json"
    return None


def _missing_dependency(text: str, instruction: str) -> str | None:
    """A command or module the environment lacks. One the instruction names is the task's own
    output (the solution failed to make it), not a dependency."""
    named = lambda name: re.search(rf"(?<![\w-]){re.escape(name.split('.')[0])}(?![\w-])", instruction)  # noqa: E731
    for match in MISSING_COMMAND.finditer(text):
        if not named(match.group(1)):
            return f"`{match.group(1)}` is not installed (command not found)"
    for match in MISSING_PATH_COMMAND.finditer(text):
        if not named(PurePosixPath(match.group(1)).name):
            return f"`{match.group(1)}` is not installed (no such file)"
    for match in MISSING_MODULE.finditer(text):
        if not named(match.group(1)):
            return f"Python module `{match.group(1)}` is not installed"
    return None


def uses_network(text: str) -> list[str]:
    return [
        line.strip() for line in text.splitlines() if NETWORK_COMMANDS.search(line) and not line.strip().startswith("#")
    ][:5]


def _reward_out_of_range(trials: list[Trial]) -> str | None:
    """Rewards are in [0, 1] (a pass is 1): a verifier that writes 100 for a pass, or -1, is
    broken whatever it was asked to verify."""
    for trial in trials:
        if trial.reward is not None and not 0.0 <= trial.reward <= 1.0:
            return f"test.sh wrote the reward {trial.reward:g} ({trial.verifier.get('reward_file')}), outside [0, 1]"
    return None


def oracle_check(task, trials: list[Trial]) -> Check:
    if not task.solution:
        return Check(
            "oracle_passes", "execution", FAIL, "the task has no reference solution (solution/solve.sh)", "unsolvable"
        )
    evidence = {"runs": [t.evidence() for t in trials]}
    out_of_range = _reward_out_of_range(trials)
    if out_of_range:
        return Check(
            "oracle_passes", "execution", FAIL, f"the verifier breaks: {out_of_range}", "broken_verifier", evidence
        )
    limit_s, memory_mb = task.limits.agent_timeout_s, task.limits.memory_mb
    timed_out = [t for t in trials if any(s.timed_out for s in t.steps)]
    oom = [t for t in trials if any(s.oom_killed for s in t.steps)]
    if timed_out:
        return Check(
            "oracle_passes",
            "execution",
            FAIL,
            f"the reference solution ran past the task's agent timeout ({limit_s:g} s)",
            "unhealthy",
            evidence,
        )
    if oom:
        return Check(
            "oracle_passes",
            "execution",
            FAIL,
            f"the reference solution was killed for memory (the task allows {memory_mb} MB)",
            "unhealthy",
            evidence,
        )
    if any(t.passed for t in trials):
        solve_s = max((s.duration_s for t in trials for s in t.steps), default=0.0)
        evidence["solution_s"], evidence["limit_s"] = round(solve_s, 3), limit_s
        return Check(
            "oracle_passes", "execution", PASS, f"passes ({solve_s:.2f} s of {limit_s:g} s allowed)", evidence=evidence
        )
    text = "\n".join(_outputs(t) for t in trials)
    network = NETWORK_ERRORS.search(text)
    allow = task.environment.allow_network if task.environment else False
    if network and not allow:
        return Check(
            "oracle_passes",
            "execution",
            FAIL,
            f"needs the network, which the task disallows (allow_internet = false): {network.group(0)!r}",
            "unhealthy",
            evidence,
        )
    instruction = (
        task.instruction
        if isinstance(task.instruction, str)
        else "\n".join(m.get("content", "") for m in task.instruction)
    )
    missing = _missing_dependency(text, instruction)
    if missing:
        return Check(
            "oracle_passes",
            "execution",
            FAIL,
            f"a dependency is missing from the environment: {missing}",
            "unhealthy",
            evidence,
        )
    broken = [b for b in (_verifier_broken(t) for t in trials) if b]
    if broken:
        return Check(
            "oracle_passes", "execution", FAIL, f"the verifier breaks: {broken[0]}", "broken_verifier", evidence
        )
    rewards = [t.reward for t in trials]
    return Check(
        "oracle_passes", "execution", FAIL, f"the reference solution fails (rewards {rewards})", "unsolvable", evidence
    )


def nop_check(trials: list[Trial]) -> Check:
    evidence = {"runs": [t.evidence() for t in trials]}
    out_of_range = _reward_out_of_range(trials)
    if out_of_range:
        return Check(
            "nop_fails", "execution", FAIL, f"the verifier breaks: {out_of_range}", "broken_verifier", evidence
        )
    if trials and all(t.passed for t in trials):
        return Check("nop_fails", "execution", FAIL, "doing nothing passes the verifier", "broken_verifier", evidence)
    return Check("nop_fails", "execution", PASS, "doing nothing fails", evidence=evidence)


def _outcome(trial: Trial) -> tuple:
    """What a repeat must reproduce: the reward, and whether the verifier timed out or failed
    (a verifier that hangs one time in three is flaky even when every run's reward is 0)."""
    return (
        round(trial.reward or 0.0, 6),
        bool(trial.verifier.get("timed_out")),
        bool(trial.verifier_error or trial.error),
    )


def results_vary(oracle: list[Trial], nop: list[Trial]) -> bool:
    return any(len({_outcome(t) for t in runs}) > 1 for runs in (oracle, nop))


def repeat_check(oracle: list[Trial], nop: list[Trial], plan: str = "") -> Check:
    """`plan` says how many runs the task was given and why (nondeterminism.py)."""
    seen = {"oracle": [t.reward for t in oracle], "nop": [t.reward for t in nop]}
    outcomes = {"oracle": [_outcome(t) for t in oracle], "nop": [_outcome(t) for t in nop]}
    evidence = {"rewards": seen, **({"repeats": plan} if plan else {})}
    varied = [name for name, runs in outcomes.items() if len(set(runs)) > 1]
    if varied:
        described = {
            name: [
                f"{r:g}" + (" timed out" if hung else "") + (" verifier error" if broke and not hung else "")
                for r, hung, broke in outcomes[name]
            ]
            for name in varied
        }
        return Check(
            "deterministic",
            "execution",
            FAIL,
            "the verifier's result varies across repeats: " + ", ".join(f"{n} runs {described[n]}" for n in varied),
            "flaky",
            {**evidence, "outcomes": {n: [list(o) for o in runs] for n, runs in outcomes.items()}},
        )
    if len(oracle) < 2 and len(nop) < 2:
        return Check("deterministic", "execution", SKIP, "one run each (--repeats 1)", evidence=evidence)
    return Check(
        "deterministic",
        "execution",
        PASS,
        f"same result over {len(oracle)} + {len(nop)} runs" + (f" ({plan})" if plan else ""),
        evidence=evidence,
    )


def network_check(task) -> Check:
    allow = task.environment.allow_network if task.environment else False
    found = {}
    for label, path in (
        ("solution/solve.sh", Path(task.solution or "") / "solve.sh"),
        ("tests/test.sh", Path(task.metadata.get("tests_dir", "")) / "test.sh"),
    ):
        if path.is_file():
            lines = uses_network(path.read_text(errors="replace"))
            if lines:
                found[label] = lines
    if not found:
        return Check(
            "network_policy",
            "environment",
            PASS,
            "no network use found in solve.sh or test.sh",
            evidence={"allow_internet": allow},
        )
    if allow:
        return Check(
            "network_policy",
            "environment",
            PASS,
            "uses the network, which the task allows",
            evidence={"allow_internet": allow, "uses": found},
        )
    return Check(
        "network_policy",
        "environment",
        WARN,
        "solve.sh or test.sh reaches for the network while the task disallows it",
        evidence={"allow_internet": allow, "uses": found},
    )


# ---- declared dependencies -----------------------------------------------------------------


def declared_packages(dockerfile: Path) -> dict[str, list[str]]:
    """The apt and pip packages a Dockerfile's RUN steps install, by name (`jq=1.6*` is jq)."""
    runs = run_commands(parsed_dockerfile(dockerfile))
    found: dict[str, list[str]] = {}
    for manager in ("apt", "pip"):
        names = [
            re.split(r"[=<>!~\[;@ ]", word, maxsplit=1)[0] for run in runs for word in installed_packages(run, manager)
        ]
        found[manager] = list(dict.fromkeys(name for name in names if name))
    return found


def check_dependencies(actor: Actor, packages: dict[str, list[str]]) -> str | None:
    for name in packages["apt"]:
        actor.run(
            f"dpkg-query -W -f='${{Status}}' {shlex.quote(name)} 2>&1 | grep -q 'install ok installed'", timeout=30
        )
    for name in packages["pip"]:
        actor.run(
            f"python3 -c 'import importlib.metadata as m, sys; m.version(sys.argv[1])' {shlex.quote(name)}", timeout=60
        )
    return None


def dependency_check(packages: dict[str, list[str]], trial: Trial | None) -> Check:
    if not packages["apt"] and not packages["pip"]:
        return Check("dependencies_present", "environment", SKIP, "the Dockerfile installs no packages")
    if trial is None or trial.error:
        return Check(
            "dependencies_present",
            "environment",
            FAIL,
            f"could not look: {trial.error if trial else '-'}",
            "unhealthy",
            {"declared": packages},
        )
    names = packages["apt"] + packages["pip"]
    missing = [name for name, step in zip(names, trial.steps) if step.exit_code != 0]
    evidence = {"declared": packages, "steps": trial.evidence()["steps"]}
    if missing:
        return Check(
            "dependencies_present",
            "environment",
            FAIL,
            f"declared but not installed: {', '.join(missing)}",
            "unhealthy",
            evidence,
        )
    return Check(
        "dependencies_present", "environment", PASS, f"{len(names)} declared packages present", evidence=evidence
    )
