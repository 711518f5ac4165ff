"""Verdict decisions from recorded trial evidence: pure functions, no sandbox."""

from posttrain.quality import execution
from posttrain.quality.trial import Step, Trial
from posttrain.quality.verdicts import FAIL, PASS, Check, decide
from posttrain.tasks.records import Limits, Task


def task(solution="/nonexistent/solution", allow_network=False) -> Task:
    from posttrain.tasks.records import Environment

    return Task(
        id="t",
        domain="d",
        instruction="x",
        kind="terminal",
        verifier="harbor",
        solution=solution,
        environment=Environment(allow_network=allow_network),
        limits=Limits(agent_timeout_s=5, memory_mb=64),
        metadata={"tests_dir": "/nonexistent/tests"},
    )


def trial(passed: bool, reward=None, steps=(), **verifier) -> Trial:
    verifier = {"exit_code": 0, "reward_file": "/logs/verifier/reward.txt", **verifier}
    return Trial("x", list(steps), reward if reward is not None else float(passed), passed, verifier)


def test_the_most_fundamental_failure_wins():
    checks = [
        Check("a", "probe", FAIL, "hack", "exploitable"),
        Check("b", "execution", FAIL, "fails", "unsolvable"),
        Check("c", "environment", PASS, "ok"),
    ]
    assert decide(checks) == ("unsolvable", "b: fails")
    assert decide([Check("c", "lint", "warn", "w")]) == ("ok", "")
    both = [Check("d", "execution", FAIL, "random", "flaky"), Check("n", "execution", FAIL, "nop", "broken_verifier")]
    assert decide(both)[0] == "flaky"


def test_oracle_check_tells_limits_network_dependencies_crashes_and_plain_failure_apart():
    assert execution.oracle_check(task(), [trial(True)]).status == PASS
    slow = trial(False, steps=[Step("bash /solution/solve.sh", 124, 5.0, timed_out=True)])
    assert execution.oracle_check(task(), [slow]).verdict == "unhealthy"
    oom = trial(False, steps=[Step("bash /solution/solve.sh", 137, 1.0, oom_killed=True)])
    assert "memory" in execution.oracle_check(task(), [oom]).summary
    offline = trial(False, steps=[Step("s", 6, 0.1, output_tail="curl: (6) Could not resolve host: example.com")])
    assert execution.oracle_check(task(), [offline]).verdict == "unhealthy"
    assert execution.oracle_check(task(allow_network=True), [offline]).verdict == "unsolvable"
    missing = trial(False, stderr_tail="/tests/test.sh: line 3: numcheck: command not found", exit_code=127)
    assert "numcheck" in execution.oracle_check(task(), [missing]).summary
    hang = trial(False, timed_out=True, reward_file=None)
    assert execution.oracle_check(task(), [hang]).verdict == "broken_verifier"
    silent = trial(False, reward_file=None, error="test.sh wrote neither")
    assert execution.oracle_check(task(), [silent]).verdict == "broken_verifier"
    assert execution.oracle_check(task(), [trial(False), trial(False)]).verdict == "unsolvable"
    assert execution.oracle_check(task(solution=None), []).verdict == "unsolvable"
    # bash dying on the test script itself (set -u): the verifier, not the solution
    unbound = trial(
        False, exit_code=1, reward_file=None, stderr_tail="/tests/test.sh: line 6: EXPECTED: unbound variable"
    )
    assert execution.oracle_check(task(), [unbound]).verdict == "broken_verifier"
    # a reward outside [0, 1] (a percentage) passes nothing honestly, in either run
    percent = trial(True, reward=100.0)
    assert execution.oracle_check(task(), [percent]).verdict == "broken_verifier"
    assert execution.nop_check([trial(False, reward=-1.0)]).verdict == "broken_verifier"


def test_nop_and_repeat_checks():
    assert execution.nop_check([trial(True), trial(True)]).verdict == "broken_verifier"
    assert execution.nop_check([trial(True), trial(False)]).status == PASS  # mixed: the repeat check's call
    varied = execution.repeat_check([trial(True), trial(False)], [trial(False), trial(False)])
    assert varied.verdict == "flaky" and "oracle" in varied.summary
    assert execution.repeat_check([trial(True)] * 3, [trial(False)] * 3).status == PASS
    # the same reward every time, but one run of three hung: not a deterministic verifier
    hung = trial(False, timed_out=True, error="test.sh ran past the verifier timeout")
    sometimes = execution.repeat_check([trial(True)] * 3, [trial(False), hung, trial(False)])
    assert sometimes.verdict == "flaky" and "timed out" in sometimes.summary
    always = execution.repeat_check([trial(True)] * 3, [hung] * 3)
    assert always.status == PASS  # hangs every time: the nop and oracle checks' business, not flakiness


def test_declared_packages_are_read_from_run_lines(tmp_path):
    dockerfile = tmp_path / "Dockerfile"
    dockerfile.write_text(
        "FROM python:3.11-slim\nRUN apt-get update && apt-get install -y --no-install-recommends \\\n"
        "    jq=1.6* tree && rm -rf /var/lib/apt/lists/*\nRUN pip install --no-cache-dir "
        "tomli-w==1.0.0 'requests>=2' -r req.txt\n"
    )
    assert execution.declared_packages(dockerfile) == {"apt": ["jq", "tree"], "pip": ["tomli-w", "requests"]}
