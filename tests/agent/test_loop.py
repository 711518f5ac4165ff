"""The agent loop under injected faults: every one ends in a recorded error and a recovery,
or a clean failure mode; none crashes the run."""

from pathlib import Path

import pytest

from posttrain.agent.loop import AgentConfig, run_episodes
from posttrain.agent.policies import OraclePolicy, Policy, Reply, ScriptedPolicy
from posttrain.agent.tool_calls import format_call
from posttrain.dispatch import Preempted
from posttrain.sandbox.interface import SandboxError
from tests.agent.sandbox_kills import SandboxKiller


def bash(command: str, **extra) -> str:
    return format_call("bash", {"command": command, **extra})


def run(task, policy, tokenizer, **config):
    return run_episodes([task], policy, tokenizer, AgentConfig(**config))[0]


def errors(trajectory):
    return [c.error for c in trajectory.tool_calls]


def test_oracle_and_nothing(good_file_task, tokenizer):
    assert run(good_file_task, OraclePolicy(), tokenizer).reward.passed
    nothing = run(good_file_task, ScriptedPolicy([format_call("finish", {})]), tokenizer)
    assert not nothing.reward.passed and nothing.failure_mode == "wrong_answer" and nothing.stop_reason == "finish"


def test_malformed_calls_failing_commands_and_timeouts_are_observations(good_file_task, tokenizer):
    script = [
        "<tool_call>{this is not json</tool_call>",
        "I think I am done.",  # no call at all
        format_call("bash", {"cmd": "ls"}),  # wrong argument name
        bash("cat /app/nothing-here"),
        bash("sleep 20", timeout_s=1),
        bash("echo ok > /app/good.txt"),
        format_call("finish", {}),
    ]
    trajectory = run(good_file_task, ScriptedPolicy(script), tokenizer, failure_streak=10)
    assert errors(trajectory) == [
        "malformed_call",
        "malformed_call",
        "bad_arguments",
        "nonzero_exit",
        "timeout",
        None,
        None,
    ]
    observations = [t.tool_calls[0].observation for t in trajectory.turns]
    assert "not a JSON object" in observations[0] and "no tool call found" in observations[1]
    assert "cmd" in observations[2] and "No such file" in observations[3] and "killed after 1 s" in observations[4]
    assert trajectory.reward.passed and trajectory.stop_reason == "finish"


def test_a_failure_streak_rolls_back_to_the_last_good_checkpoint(good_file_task, tokenizer):
    script = [
        bash("echo ok > /app/good.txt"),  # a good turn: checkpoint
        bash("echo junk > /app/bad.txt; rm /app/good.txt; exit 1"),  # fails, with side effects
        bash("exit 2"),
        bash("exit 3"),  # third failure in a row: roll back to after turn 0
        format_call("finish", {}),
    ]
    trajectory = run(good_file_task, ScriptedPolicy(script), tokenizer, failure_streak=3)
    assert trajectory.turns[0].snapshot_id is not None
    assert trajectory.turns[3].restored_snapshot == trajectory.turns[0].snapshot_id
    assert any("rollback" in e for e in trajectory.turns[3].events)
    assert trajectory.reward.passed  # good.txt is back and bad.txt is gone


def test_the_rollback_tool(good_file_task, tokenizer):
    script = [
        bash("echo ok > /app/good.txt"),
        bash("echo junk > /app/bad.txt"),
        format_call("rollback", {}),
        format_call("finish", {}),
    ]
    trajectory = run(good_file_task, ScriptedPolicy(script), tokenizer, checkpoint_every=1)
    # turn 1 was also good, so the checkpoint is after it: rolling back keeps bad.txt
    assert trajectory.turns[2].restored_snapshot == trajectory.turns[1].snapshot_id
    assert not trajectory.reward.passed
    first = run(good_file_task, ScriptedPolicy([format_call("rollback", {}), format_call("finish", {})]), tokenizer)
    assert errors(first)[0] == "not_found"  # nothing to roll back to yet


def test_a_transient_sandbox_error_is_retried(good_file_task, tokenizer):
    class FlakyOnce(Policy):
        def act(self, views):
            view = views[0]
            if view.turn == 0:
                real, calls = view.sandbox.exec, []

                def flaky(*args, **kwargs):
                    calls.append(1)
                    if len(calls) == 1:
                        raise SandboxError("injected: the sandbox hiccupped")
                    return real(*args, **kwargs)

                view.sandbox.exec = flaky
                return [Reply(bash("echo ok > /app/good.txt"))]
            return [Reply(format_call("finish", {}))]

    trajectory = run(good_file_task, FlakyOnce(), tokenizer, retry_backoff_s=0.01)
    call = trajectory.tool_calls[0]
    assert call.error is None and call.attempts == 2
    assert trajectory.reward.passed


def test_a_sandbox_that_dies_mid_episode_ends_cleanly(good_file_task, tokenizer):
    class Killer(Policy):
        def act(self, views):
            view = views[0]
            if view.turn == 1:
                view.sandbox.close()  # the sandbox dies between two turns
            return [Reply(bash("echo ok > /app/good.txt"))]

    trajectory = run(good_file_task, Killer(), tokenizer, retry_backoff_s=0.01, tool_retries=1)
    assert trajectory.failure_mode == "sandbox_died" and trajectory.stop_reason == "error"
    assert trajectory.tool_calls[-1].error == "sandbox_error" and trajectory.tool_calls[-1].attempts == 2
    assert trajectory.reward is not None and not trajectory.reward.passed


def test_a_command_whose_sandbox_process_is_killed_from_outside_is_retried(good_file_task, tokenizer):
    """Not the command's failure (exit 137 from the agent's point of view) but the sandbox's: the
    call is retried as any transient sandbox error, and the model sees the retry's output."""
    command = "if [ -e /app/ran ]; then echo second; else touch /app/ran; sleep 60; fi"
    # killed once `sleep` runs, so the first attempt has touched /app/ran (the command line holds
    # "sleep 60" from the start: killed on that alone, the retry would find no /app/ran)
    with SandboxKiller(lambda: ["sleep 60"], running="sleep") as killer:
        trajectory = run(good_file_task, ScriptedPolicy([bash(command)]), tokenizer, retry_backoff_s=0.01)
    call = trajectory.tool_calls[0]
    assert killer.killed is not None and call.attempts == 2
    assert call.error is None and call.observation.strip() == "second"


def test_a_verifier_killed_from_outside_outranks_how_the_agent_stopped(good_file_task, tokenizer):
    """The agent ran out of steps; its verifier was then killed mid-run: an infrastructure
    failure (not max_steps, which would train a 0), and the sandbox is closed after."""
    Path(good_file_task.metadata["tests_dir"], "test.sh").write_text("sleep 60\necho 1 > /logs/verifier/reward.txt\n")
    with SandboxKiller(lambda: ["/tests/test.sh"], running="sleep") as killer:  # while test.sh runs
        trajectory = run(good_file_task, ScriptedPolicy([bash("true")] * 5), tokenizer, max_steps=1)
    assert killer.killed is not None and trajectory.stop_reason == "max_steps"
    assert trajectory.failure_mode == "verifier_killed" and trajectory.infra_failed, trajectory.reward
    assert trajectory.reward.value == 0.0 and trajectory.reward.details["verifier_killed"] is True


def test_a_preempted_engine_call_is_no_outcome_of_its_episodes(good_file_task, tokenizer):
    """The job was preempted while its episodes waited for the engine: it goes back to the
    queue (Preempted propagates) instead of ending them as policy errors that get verified."""
    opened = []

    class PreemptedOnTurnOne(Policy):
        def act(self, views):
            opened.extend(v.sandbox for v in views)
            if views[0].turn == 1:
                raise Preempted()
            return [Reply(bash("echo ok > /app/good.txt")) for _ in views]

    with pytest.raises(Preempted):
        run_episodes([good_file_task, good_file_task], PreemptedOnTurnOne(), tokenizer)
    assert opened and all(sandbox._closed for sandbox in opened)


def test_budgets_end_episodes(good_file_task, tokenizer):
    steps = run(good_file_task, ScriptedPolicy([bash("true")] * 10), tokenizer, max_steps=3)
    assert steps.stop_reason == "max_steps" and len(steps.turns) == 3
    timed = run(good_file_task, ScriptedPolicy([bash("sleep 5")] * 10), tokenizer, wall_time_s=2)
    assert timed.stop_reason == "timeout" and timed.failure_mode == "timeout"
    assert timed.tool_calls[0].error == "timeout"  # the command was cut at the episode's remaining time
    assert timed.duration_s < 10


def test_turns_without_a_tool_call_end_the_episode_after_max_idle_turns(good_file_task, tokenizer):
    talk = ["I would list the files.", "<tool_call>{broken</tool_call>", "Let me think.", bash("true")]
    idle = run(good_file_task, ScriptedPolicy(talk), tokenizer, max_steps=8, max_idle_turns=2)
    assert idle.stop_reason == "idle" and idle.failure_mode == "idle" and len(idle.turns) == 2
    # a tool call in between resets the count
    mixed = ["Hmm.", bash("true"), "Hmm.", bash("true"), format_call("finish", {})]
    kept = run(good_file_task, ScriptedPolicy(mixed), tokenizer, max_steps=8, max_idle_turns=2)
    assert kept.stop_reason == "finish" and len(kept.turns) == 5
    default = run(good_file_task, ScriptedPolicy(talk[:3] * 3), tokenizer, max_steps=5)
    assert default.stop_reason == "max_steps" and len(default.turns) == 5
