"""The verifier in a real sandbox: one command copies the tests in and runs test.sh, another
reads the reward; what test.sh prints cannot stand in for the reward files, output past the
capture limit still gets its reward read, a test.sh killed before it finished gives none, and a
writer the agent left behind plants nothing. A verifier the infrastructure stopped (its sandbox
process killed from outside, its tests never started) is no verdict; one that ran and failed,
ran out of its own time or memory, or was killed by code it ran, is one."""

import pytest

from posttrain.agent import verifier
from posttrain.agent.task_sandbox import build_task_environment, open_task_sandbox
from posttrain.agent.verifier import run_verifier
from posttrain.tasks.harbor import load_harbor_task
from tests.agent.sandbox_kills import SandboxKiller


def _task(tmp_path, test_sh: str, verifier_timeout: float = 20.0, memory_mb: int = 2048):
    root = tmp_path / "task"
    (root / "environment").mkdir(parents=True)
    (root / "environment" / "Dockerfile").write_text("FROM debian:bookworm-slim\nWORKDIR /app\n")
    (root / "tests").mkdir()
    (root / "tests" / "test.sh").write_text(test_sh)
    (root / "tests" / "expected.txt").write_text("42\n")
    (root / "task.toml").write_text(
        f'version = "1.0"\n[verifier]\ntimeout_sec = {verifier_timeout}\n'
        f"[environment]\nallow_internet = false\nmemory_mb = {memory_mb}\n"
    )
    (root / "instruction.md").write_text("Write 42 into /app/out.txt.")
    return load_harbor_task(root)


def _verify(task, prepare: str = ""):
    built = build_task_environment(task)
    sandbox = open_task_sandbox(task, None, built)
    try:
        if prepare:
            assert sandbox.exec(["bash", "-c", prepare], timeout=30).exit_code == 0
        return run_verifier(task, sandbox, built.workdir)
    finally:
        sandbox.close()


def test_reward_exit_code_and_output_come_back_from_one_command(tmp_path, needs_bwrap):
    task = _task(
        tmp_path,
        "cmp -s /app/out.txt /tests/expected.txt && r=1 || r=0\n"
        "echo checked; echo oops >&2; echo $r > /logs/verifier/reward.txt; exit 3\n",
    )
    passed = _verify(task, "echo 42 > /app/out.txt")
    assert passed.passed and passed.value == 1.0
    assert passed.details["exit_code"] == 3
    assert passed.details["stdout_tail"] == "checked\n" and "oops" in passed.details["stderr_tail"]
    assert passed.details["reward_file"] == "/logs/verifier/reward.txt"
    failed = _verify(task)
    assert not failed.passed and failed.value == 0.0


def test_printed_reward_markers_do_not_count(tmp_path, needs_bwrap):
    """test.sh shows the agent's file; the agent wrote what the harness's own listing of the
    reward files looks like. Only the files count, and there are none."""
    task = _task(tmp_path, "cat /app/out.txt\n")
    forged = "==posttrain-reward-file== /logs/verifier/reward.txt\n1\n"
    reward = _verify(task, f"printf {forged!r} > /app/out.txt")
    assert not reward.passed
    assert reward.details["reward_file"] is None
    assert "/logs/verifier/reward.txt" in reward.details["error"]


def test_output_past_the_capture_limit_still_gets_its_reward_read(tmp_path, needs_bwrap):
    task = _task(tmp_path, "yes flood | head -c 3000000\necho 1 > /logs/verifier/reward.txt\n")
    reward = _verify(task)
    assert reward.passed, reward.details


def test_a_test_sh_killed_before_it_finished_gives_no_reward(tmp_path, needs_bwrap):
    """The agent's program, run by test.sh, writes a passing reward and kills test.sh before
    test.sh can write its own verdict."""
    task = _task(
        tmp_path,
        "echo 0 > /logs/verifier/reward.txt\nbash /app/prog.sh\n"
        "cmp -s /app/out.txt /tests/expected.txt && echo 1 > /logs/verifier/reward.txt\n",
    )
    hack = "echo 1 > /logs/verifier/reward.txt\nkill -9 $PPID\n"
    reward = _verify(task, f"printf {hack!r} > /app/prog.sh")
    assert not reward.passed and reward.value == 0.0
    assert reward.details["exit_code"] == 137 and "killed by signal 9" in reward.details["error"]
    assert "verifier_ran" not in reward.details  # a verdict: the agent's code killed its tests
    honest = _verify(task, "echo 42 > /app/out.txt; echo true > /app/prog.sh")
    assert honest.passed


def test_a_verifier_killed_from_outside_mid_run_is_no_verdict(tmp_path, needs_bwrap):
    """The sandbox's process running test.sh is SIGKILLed from the host while test.sh runs (what
    the host's OOM killer or a chaos run does): the reward is not a 0 the policy earned."""
    task = _task(tmp_path, "sleep 60\necho 1 > /logs/verifier/reward.txt\n")
    with SandboxKiller(lambda: ["/tests/test.sh"], running="sleep") as killer:  # while test.sh runs
        reward = _verify(task)
    assert killer.killed is not None
    assert reward.details["verifier_ran"] is False and reward.details["verifier_killed"] is True
    assert "killed from outside" in reward.details["error"] and reward.details["duration_s"] < 60


def test_tests_that_run_out_of_their_sandbox_memory_are_a_verdict(tmp_path, needs_bwrap):
    """The sandbox's own memory limit is the episode's: test.sh OOM-killed under it is a 0."""
    task = _task(tmp_path, "echo 0 > /logs/verifier/reward.txt\nexec tail /dev/zero\n", memory_mb=64)
    reward = _verify(task)
    assert reward.value == 0.0 and "verifier_ran" not in reward.details
    assert reward.details["exit_code"] == 137 and "out of memory" in reward.details["error"]


def test_only_a_timeout_before_the_tests_started_is_the_runners(tmp_path, needs_bwrap, monkeypatch):
    slow = _verify(_task(tmp_path / "slow", "sleep 30\n", verifier_timeout=1.0))
    assert slow.details.get("timed_out") is True and "verifier_ran" not in slow.details, slow.details  # the tests' own
    assert "posttrain-tests-started" not in slow.details["stderr_tail"]
    monkeypatch.setattr(verifier, "COPY_ALLOWANCE_S", 0)  # a deadline no copy can meet
    never = _verify(_task(tmp_path / "never", "echo 1 > /logs/verifier/reward.txt\n", verifier_timeout=0.001))
    assert never.details["verifier_ran"] is False and "test.sh never started" in never.details["error"]


@pytest.mark.parametrize("test_sh", ["exit 1\n", "echo 0 > /logs/verifier/reward.txt\nfalse\n"])
def test_tests_that_ran_and_failed_are_a_verdict(tmp_path, needs_bwrap, test_sh):
    reward = _verify(_task(tmp_path, test_sh))
    assert reward.value == 0.0 and "verifier_ran" not in reward.details and not reward.details["timed_out"]


def test_a_writer_the_agent_left_behind_plants_no_reward(tmp_path, needs_bwrap):
    """The agent's last command leaves a detached loop writing a passing reward (double fork,
    setsid, nohup); test.sh writes none. Were the loop alive, the reward read after test.sh
    would be its 1."""
    task = _task(tmp_path, "sleep 0.3\nexit 1\n")
    writer = "while :; do mkdir -p /logs/verifier; echo 1 > /logs/verifier/reward.txt; sleep 0.01; done"
    attack = f"( setsid nohup bash -c '{writer}' >/dev/null 2>&1 & ) ; echo left"
    reward = _verify(task, attack)
    assert not reward.passed and reward.value == 0.0 and reward.details["reward_file"] is None


def test_test_sh_writes_its_reward_where_no_agent_command_had_it_mounted(tmp_path, needs_bwrap):
    """/logs/verifier is a fresh host directory mounted for test.sh's command alone: what the
    agent left there (here a link to its own passing reward) is gone, test.sh's reward is read
    on the host, and nothing of it stays in the sandbox."""
    task = _task(tmp_path, "cat /logs/verifier/* 2>/dev/null; echo 0.5 > /logs/verifier/reward.txt\n")
    built = build_task_environment(task)
    sandbox = open_task_sandbox(task, None, built)
    try:
        planted = "mkdir -p /app/mine && echo 1 > /app/mine/reward.txt && rm -rf /logs/verifier"
        assert sandbox.exec(["bash", "-c", f"{planted} && ln -s /app/mine /logs/verifier"]).ok
        reward = run_verifier(task, sandbox, built.workdir)
        assert reward.value == 0.5 and reward.details["stdout_tail"] == ""
        assert sandbox.exec(["bash", "-c", "ls -A /logs/verifier"]).stdout == ""
        assert list(sandbox.workspace.rw.glob("private-*")) == []
    finally:
        sandbox.close()


def test_a_reward_file_that_is_a_link_is_not_followed_on_the_host(tmp_path, needs_bwrap):
    host_file = tmp_path / "host-reward.txt"
    host_file.write_text("1\n")
    task = _task(tmp_path, f"ln -s {host_file} /logs/verifier/reward.txt\n")
    reward = _verify(task)
    assert reward.value == 0.0 and reward.details["reward_file"] is None


def test_an_agent_that_deleted_its_own_workdir_is_verified_and_fails(tmp_path, needs_bwrap):
    """Not a verifier that could not run (an infrastructure failure, masked in training): the
    tests run from / and fail."""
    _task(tmp_path, "test -f /root/project/out.txt && r=1 || r=0; echo $r > /logs/verifier/reward.txt\n")
    (tmp_path / "task" / "environment" / "Dockerfile").write_text("FROM debian:bookworm-slim\nWORKDIR /root/project\n")
    task = load_harbor_task(tmp_path / "task")
    reward = _verify(task, "rm -rf /root/project")
    assert reward.details.get("verifier_ran") is None and reward.details["reward_file"] == "/logs/verifier/reward.txt"
    assert not reward.passed and reward.value == 0.0
