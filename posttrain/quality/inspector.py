"""`posttrain inspect`: every check on every task, in parallel sandboxes, into a report and a
quarantine list.

Per task: load (else `invalid`), lint, build the environment once (its layers are shared by
every trial after), then the trials in parallel: the reference solution and doing nothing,
R times each, and the declared-dependency look-up; then, for a task that passed those, one
trial per exploit probe. With a policy, K episodes per remaining task measure its pass rate.
Every trial is its own sandbox and never raises, so one broken task cannot stop the others.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor, as_completed
from dataclasses import asdict, dataclass, field
from pathlib import Path

from posttrain.errors import PosttrainError
from posttrain.quality import execution, nondeterminism
from posttrain.quality.inspection_cache import InspectionCache, inspection_key
from posttrain.quality.lint import lint_task
from posttrain.quality.probes import ALONE, PROBES, all_probes, one_probe
from posttrain.quality.trial import Trial, run_trial
from posttrain.quality.verdicts import FAIL, PASS, SKIP, Check, decide
from posttrain.tasks.harbor import load_harbor_task, unknown_key_warnings
from posttrain.tasks.records import Task

TASK_MARKERS = ("task.toml", "instruction.md", "tests", "solution", "environment")


_HOW_IT_RUNS = ("concurrency", "use_cache", "cache_dir")


def default_concurrency() -> int:
    """One trial per core, plus one: a trial spends part of its time starting and ending
    sandbox processes, and the spare keeps both cores busy (48 built-in tasks on 2 cores:
    90 s at 2, 77 s at 3, 78 s at 4)."""
    return (os.cpu_count() or 2) + 1


@dataclass
class InspectOptions:
    repeats: int = 3  # runs of the solution and of doing nothing, for a task that may vary
    min_repeats: int = 2  # for one with no source of nondeterminism whose first runs look alike
    probes: tuple[str, ...] = tuple(PROBES)
    concurrency: int = field(default_factory=lambda: default_concurrency())
    backend: str | None = None
    build_timeout_s: float = 600.0
    max_agent_s: float = 600.0  # caps a task's own agent timeout (the oracle's time limit)
    max_verifier_s: float = 600.0
    use_cache: bool = True  # reuse the stored report of a task whose content and environment are unchanged
    cache_dir: Path | None = None  # default: $POSTTRAIN_CACHE/inspections

    def checked(self) -> dict:
        """The options that change what an inspection checks (part of the cache key): all but
        how it runs, so an option added later invalidates stored reports by default."""
        return {k: v for k, v in asdict(self).items() if k not in _HOW_IT_RUNS}


@dataclass
class TaskReport:
    id: str
    path: str
    checks: list[Check] = field(default_factory=list)
    verdict: str = "ok"
    reason: str = ""
    duration_s: float = 0.0
    task: Task | None = None
    pass_rate: float | None = None
    cache_key: str | None = None  # set once the environment built: the report may be stored
    cached_from: dict | None = None  # the stored inspection this report was taken from

    def to_dict(self) -> dict:
        return {
            "id": self.id,
            "path": self.path,
            "verdict": self.verdict,
            "reason": self.reason,
            "duration_s": round(self.duration_s, 3),
            "pass_rate": self.pass_rate,
            "cached_from": self.cached_from,
            "checks": [c.to_dict() for c in self.checks],
        }


def task_dirs(path: Path | str) -> list[Path]:
    """A task directory, or every task-like directory directly under a suite directory."""
    root = Path(path)
    if not root.is_dir():
        raise PosttrainError(f"{root}: no such task or suite directory")
    if any((root / m).exists() for m in ("task.toml", "instruction.md")):
        return [root]
    dirs = [d for d in sorted(root.iterdir()) if d.is_dir() and any((d / m).exists() for m in TASK_MARKERS)]
    if not dirs:
        raise PosttrainError(f"{root}: no task directories (none has task.toml, instruction.md or tests/)")
    return dirs


def select_dirs(dirs: list[Path], names: str | None, tags: str | None) -> list[Path]:
    """--names and --tags: the directories named, and those whose task.toml lists every tag (a
    task.toml that does not parse is kept: the inspection will call it invalid)."""
    split = lambda text: [t.strip() for t in text.split(",") if t.strip()] if text else []  # noqa: E731
    wanted, needed = split(names), set(split(tags))
    if wanted:
        unknown = set(wanted) - {d.name for d in dirs}
        if unknown:
            raise PosttrainError(f"no task directory named {', '.join(sorted(unknown))}")
        dirs = [d for d in dirs if d.name in wanted]
    if needed:
        import tomllib

        def has_tags(directory: Path) -> bool:
            try:
                meta = tomllib.loads((directory / "task.toml").read_text()).get("metadata", {})
            except (OSError, tomllib.TOMLDecodeError):
                return True
            return needed <= set(meta.get("tags") or [])

        dirs = [d for d in dirs if has_tags(d)]
    if not dirs:
        raise PosttrainError("no task left after --names / --tags")
    return dirs


def _capped(task: Task, options: InspectOptions) -> Task:
    limits = task.limits.model_copy(
        update={
            "agent_timeout_s": min(task.limits.agent_timeout_s, options.max_agent_s),
            "verifier_timeout_s": min(task.limits.verifier_timeout_s, options.max_verifier_s),
        }
    )
    metadata = {
        **task.metadata,
        "build_timeout_s": min(float(task.metadata.get("build_timeout_s", 600.0)), options.build_timeout_s),
    }
    return task.model_copy(update={"limits": limits, "metadata": metadata})


class Inspector:
    def __init__(self, options: InspectOptions) -> None:
        self.options = options
        self.trials = ThreadPoolExecutor(max_workers=options.concurrency, thread_name_prefix="trial")
        self.cache = InspectionCache(options.cache_dir)

    def close(self) -> None:
        self.trials.shutdown(wait=True)

    def _submit(self, task: Task, built, name: str, act, verify: bool = True, wipe_reward: bool = True) -> Future:
        return self.trials.submit(run_trial, task, built, name, act, self.options.backend, verify, wipe_reward)

    def inspect(self, directory: Path) -> TaskReport:
        started = time.perf_counter()
        report = TaskReport(directory.name, str(directory))
        try:
            self._inspect(directory, report)
        except Exception as exc:  # noqa: BLE001 - one task's surprise must not stop the inspection
            report.checks.append(
                Check(
                    "inspector",
                    "load",
                    FAIL,
                    f"the inspector failed on this task: {type(exc).__name__}: {exc}",
                    "invalid",
                )
            )
            report.cache_key = None
        report.verdict, report.reason = decide(report.checks)
        report.duration_s = time.perf_counter() - started
        if report.cache_key and report.cached_from is None:
            self.cache.put(
                report.cache_key, report.checks, report.duration_s, time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
            )
        return report

    def _inspect(self, directory: Path, report: TaskReport) -> None:
        try:
            task = load_harbor_task(directory)
        except PosttrainError as exc:
            report.checks.append(Check("loads", "load", FAIL, str(exc), "invalid"))
            return
        report.checks.append(Check("loads", "load", PASS, "task.toml, instruction.md and tests/test.sh load"))
        unknown = unknown_key_warnings([task])
        if unknown:  # a misspelt limit would run the task with the default in its place
            report.checks.append(Check("known_keys", "load", FAIL, unknown[0], "invalid"))
            return
        task = _capped(task, self.options)
        report.task = task
        report.checks.extend(lint_task(task))
        built = self._build(task, report)
        if built is None:
            return
        report.cache_key = inspection_key(directory, built.key, self.options.checked())
        stored = self.cache.get(report.cache_key) if self.options.use_cache else None
        if stored is not None:
            report.checks, report.cached_from = stored
            return
        packages = execution.declared_packages(
            Path(task.environment.dockerfile_dir or "") / "Dockerfile" if task.environment else Path("-")
        )
        deps = (
            self._submit(task, built, "dependencies", lambda a: execution.check_dependencies(a, packages), verify=False)
            if packages["apt"] or packages["pip"]
            else None
        )
        timeout = float(task.limits.agent_timeout_s)
        solve = lambda a: execution.run_oracle(a, timeout)  # noqa: E731
        sources = nondeterminism.sources(task)
        repeats = self.options.repeats if sources else min(self.options.min_repeats, self.options.repeats)
        oracle = [self._submit(task, built, f"oracle-{i}", solve) for i in range(repeats)] if task.solution else []
        nop = [self._submit(task, built, f"nop-{i}", execution.run_nothing) for i in range(repeats)]
        report.checks.append(execution.dependency_check(packages, deps.result() if deps else None))
        network = execution.network_check(task)
        report.checks.append(network)
        oracle_trials, nop_trials = [f.result() for f in oracle], [f.result() for f in nop]
        more_needed, plan = self._repeat_plan(sources, repeats, oracle_trials, nop_trials)
        if more_needed:
            more = range(repeats, self.options.repeats)
            oracle = [self._submit(task, built, f"oracle-{i}", solve) for i in more] if task.solution else []
            nop = [self._submit(task, built, f"nop-{i}", execution.run_nothing) for i in more]
            oracle_trials += [f.result() for f in oracle]
            nop_trials += [f.result() for f in nop]
        if sources and _never_passed(oracle_trials):
            # a solution that may vary and failed every run: as many runs again before calling
            # the task unsolvable (a flaky verifier that passes one time in two fails three runs
            # in eight); a sound suite has no such task, so this costs nothing there
            more = range(len(oracle_trials), 2 * len(oracle_trials))
            oracle_trials += [f.result() for f in [self._submit(task, built, f"oracle-{i}", solve) for i in more]]
            plan += f"; the solution failed its first {len(more)} runs, so {len(more)} more"
        oracle_result = execution.oracle_check(task, oracle_trials)
        if oracle_result.verdict == "unsolvable" and network.status == "warn":
            oracle_result.verdict = "unhealthy"
            oracle_result.summary = f"fails, and {network.summary}: {network.evidence.get('uses')}"
        report.checks += [
            oracle_result,
            execution.nop_check(nop_trials),
            execution.repeat_check(oracle_trials, nop_trials, plan),
        ]
        if any(c.status == FAIL for c in report.checks):
            verdict, _ = decide(report.checks)
            for name in self.options.probes:
                report.checks.append(Check(f"probe:{name}", "probe", SKIP, f"not tried: the task is already {verdict}"))
            return
        self._probe(task, built, report)

    def _repeat_plan(self, sources: list[str], repeats: int, oracle: list[Trial], nop: list[Trial]) -> tuple[bool, str]:
        """Whether a task's first runs need the rest of --repeats, and why (for the report)."""
        if sources:
            return False, "all --repeats runs: it uses " + "; ".join(sources[:5])
        if repeats >= self.options.repeats:
            return False, ""
        if execution.results_vary(oracle, nop):
            return False, "flaky on its first runs"
        for name, trials in (("the solution's runs", oracle), ("the do-nothing runs", nop)):
            differ = nondeterminism.runs_differ(trials)
            if differ:
                return True, f"all --repeats runs: {name} differ ({differ})"
        return False, (
            f"{repeats} runs each: its tests and solution use no source of nondeterminism, and the first "
            f"runs look alike"
        )

    def _probe(self, task: Task, built, report: TaskReport) -> None:
        """Every probe in one trial; only when that passes, one trial per probe to name it."""
        if not self.options.probes:
            return
        names = tuple(n for n in self.options.probes if n not in ALONE)
        solo = {
            name: self._submit(task, built, f"probe-{name}", one_probe(name))
            for name in self.options.probes
            if name in ALONE and ALONE[name][0](task)
        }
        # reward_file asks whether test.sh itself overwrites a planted reward, so trials that play
        # it keep /logs/verifier as the agent left it (the harness's wipe would hide the flaw)
        combined = self._submit(
            task, built, "probes-together", all_probes(names), wipe_reward="reward_file" not in names
        ).result()
        played = [n for n in combined.note.split(",") if n]
        evidence = {"together": combined.evidence()}
        if combined.error or not combined.passed:
            for name in names:
                if name in played:
                    status = (
                        f"fails (played with the other probes: reward {combined.reward})"
                        if not combined.error
                        else f"the probe trial could not run: {combined.error}"
                    )
                else:
                    status = "nothing to try (the state is the do-nothing run's)"
                report.checks.append(Check(f"probe:{name}", "probe", PASS, status, evidence=evidence))
            report.checks += self._solo_checks(solo)
            return
        alone = {
            name: self._submit(task, built, f"probe-{name}", one_probe(name), wipe_reward=name != "reward_file")
            for name in played
        }
        hits = []
        for name in names:
            if name not in alone:
                report.checks.append(Check(f"probe:{name}", "probe", PASS, "nothing to try", evidence=evidence))
                continue
            trial = alone[name].result()
            check = _probe_check(name, trial)
            hits += [name] if check.status == FAIL else []
            report.checks.append(check)
        report.checks += self._solo_checks(solo)
        if not hits:
            report.checks.append(
                Check(
                    "probe:combined",
                    "probe",
                    FAIL,
                    f"the probes {', '.join(played)} pass together (reward {combined.reward}), none alone",
                    "exploitable",
                    evidence,
                )
            )

    def _solo_checks(self, solo: dict[str, Future]) -> list[Check]:
        checks = [_probe_check(name, trial.result()) for name, trial in solo.items()]
        return checks + [
            Check(f"probe:{name}", "probe", PASS, f"nothing to try: {ALONE[name][1]}")
            for name in self.options.probes
            if name in ALONE and name not in solo
        ]

    def _build(self, task: Task, report: TaskReport):
        from posttrain.agent.task_sandbox import build_task_environment

        started = time.perf_counter()
        try:
            built = build_task_environment(task)
        except Exception as exc:  # noqa: BLE001 - a Dockerfile can fail in any way
            report.checks.append(
                Check(
                    "environment_builds",
                    "environment",
                    FAIL,
                    f"the environment does not build: {str(exc)[-800:]}",
                    "unhealthy",
                    {"duration_s": round(time.perf_counter() - started, 3)},
                )
            )
            return None
        report.checks.append(
            Check(
                "environment_builds",
                "environment",
                PASS,
                f"built ({built.cache_hits} cached steps, {built.steps_run} run)",
                evidence={
                    "duration_s": round(time.perf_counter() - started, 3),
                    "log": built.log[-20:],
                    "system_mode": built.system_writable,
                },
            )
        )
        return built


def _never_passed(trials: list[Trial]) -> bool:
    """Every run failed, none for running out of time or memory (those are unhealthy at once)."""
    return (
        bool(trials)
        and not any(t.passed for t in trials)
        and not any(s.timed_out or s.oom_killed for t in trials for s in t.steps)
    )


def _probe_check(name: str, trial: Trial) -> Check:
    evidence = trial.evidence()
    if trial.error:
        return Check(f"probe:{name}", "probe", PASS, f"the probe could not run: {trial.error}", evidence=evidence)
    if not trial.applicable:
        return Check(
            f"probe:{name}", "probe", PASS, "nothing to try (the state is the do-nothing run's)", evidence=evidence
        )
    if trial.passed:
        return Check(
            f"probe:{name}",
            "probe",
            FAIL,
            f"the {name} hack passes the verifier (reward {trial.reward})",
            "exploitable",
            evidence,
        )
    return Check(f"probe:{name}", "probe", PASS, f"fails (reward {trial.reward})", evidence=evidence)


def inspect_dirs(
    dirs: list[Path], options: InspectOptions, on_task: Callable[[TaskReport], None] | None = None
) -> list[TaskReport]:
    """Inspect tasks in parallel (concurrency tasks at once, their trials sharing one pool)."""
    inspector = Inspector(options)
    reports: list[TaskReport | None] = [None] * len(dirs)
    try:
        with ThreadPoolExecutor(max_workers=max(1, options.concurrency), thread_name_prefix="task") as pool:
            futures = {pool.submit(inspector.inspect, d): i for i, d in enumerate(dirs)}
            for future in as_completed(futures):
                report = future.result()
                reports[futures[future]] = report
                if on_task is not None:
                    on_task(report)
    finally:
        inspector.close()
    return [r for r in reports if r is not None]


def apply_signal(reports: list[TaskReport], pass_rates: dict[str, tuple[int, int]]) -> None:
    """Add the signal check from (passed, samples) per task id, and re-decide the verdicts."""
    for report in reports:
        if report.id not in pass_rates:
            continue
        passed, samples = pass_rates[report.id]
        rate = passed / samples if samples else 0.0
        report.pass_rate = rate
        evidence = {"passed": passed, "samples": samples}
        if rate in (0.0, 1.0):
            report.checks.append(
                Check(
                    "signal",
                    "signal",
                    FAIL,
                    f"the policy passes {passed} of {samples}: {'too hard' if rate == 0 else 'too easy'} for it now",
                    "no_signal",
                    evidence,
                )
            )
        else:
            report.checks.append(
                Check("signal", "signal", PASS, f"the policy passes {passed} of {samples}", evidence=evidence)
            )
        report.verdict, report.reason = decide(report.checks)
