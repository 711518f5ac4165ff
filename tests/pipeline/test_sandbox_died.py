"""A terminal rollout whose sandbox dies mid-episode, or whose verifier's sandbox process is
killed mid-run, fails its job (the dispatcher runs the group again) instead of being trained on
as if the policy had failed; on the last attempt the group comes back, the dead episode marked,
for the step to leave out: what it trains equals the group without that episode."""

from pathlib import Path

import pytest
import torch

from posttrain.agent.loop import AgentConfig, run_episodes
from posttrain.agent.policies import Policy, Reply
from posttrain.agent.tool_calls import format_call
from posttrain.dispatch import Executor, Job, RetryPolicy
from posttrain.dispatch.thread_worker import ThreadWorkerFactory
from posttrain.pipeline.rollout_job import InfraFailed, raise_if_infra_failed
from posttrain.pipeline.step_scoring import score_step
from posttrain.pipeline.terminal_rollout import EpisodeGroup
from tests.agent.conftest import good_file_task, needs_bwrap  # noqa: F401 - fixtures
from tests.agent.sandbox_kills import SandboxKiller
from tests.pipeline.test_infra_masking import config


class KillsItsSandbox(Policy):
    def act(self, views):
        if views[0].turn == 1:
            views[0].sandbox.close()  # the sandbox dies between two turns
        return [Reply(format_call("bash", {"command": "echo ok > /app/good.txt"}))]


class Finishes(Policy):
    def act(self, views):
        return [Reply(format_call("finish", {}))]


def episodes(task, policy, tokenizer):
    return EpisodeGroup(
        task, run_episodes([task, task], policy, tokenizer, AgentConfig(retry_backoff_s=0.01, tool_retries=1))
    )


def test_a_dead_sandbox_fails_the_rollout_and_the_dispatcher_retries_it(good_file_task, tokenizer):  # noqa: F811
    died = episodes(good_file_task, KillsItsSandbox(), tokenizer)
    with pytest.raises(InfraFailed, match="sandbox_died in 2 of 2 episodes"):
        raise_if_infra_failed(died, 1, 2)
    raise_if_infra_failed(died, 2, 2)  # the last attempt keeps it: the step masks the episodes
    assert died.valid == [False, False] and died.masked_reasons() == ["sandbox_died", "sandbox_died"]
    healthy = episodes(good_file_task, Finishes(), tokenizer)
    raise_if_infra_failed(healthy, 1, 2)  # a wrong answer is the policy's: trained on

    outcomes = iter([died, healthy])

    def rollout(payload, ctx):
        group = next(outcomes)
        raise_if_infra_failed(group, ctx.attempt, 2)
        return group

    executor = Executor(ThreadWorkerFactory(rollout), workers=1, retry=RetryPolicy(max_attempts=2, backoff_s=0.01))
    try:
        executor.submit(Job("slot", None))
        result = executor.results.get(timeout=60)
    finally:
        executor.shutdown()
    assert result.ok and result.value is healthy and result.job.attempts == 1
    assert "InfraFailed" in result.job.errors[0] and executor.stats.retries == 1


class WritesBySeed(Policy):
    """Episode 0 writes the answer and makes its verifier slow (so it can be killed mid-run);
    episodes 1 and 3 write the answer; episode 2 does nothing."""

    def __init__(self, tokenizer) -> None:
        self.tokenizer = tokenizer
        self.slow_sandbox = None

    def act(self, views):
        return [self._reply(view) for view in views]

    def _reply(self, view) -> Reply:
        if view.turn > 0 or view.seed == 2:
            text = format_call("finish", {})
        else:
            command = "echo ok > /app/good.txt"
            if view.seed == 0:
                self.slow_sandbox = view.sandbox.id
                command += " && touch /app/slow"
            text = format_call("bash", {"command": command})
        ids = self.tokenizer.encode(text, add_special_tokens=False)  # tokens to train on, as a model's
        return Reply(text, ids, [-0.5] * len(ids), [0] * len(ids))


@pytest.mark.parametrize("advantage", ["grpo", "rloo"])
def test_a_verifier_killed_mid_run_is_masked_and_the_rest_trains_as_without_it(good_file_task, tokenizer, advantage):  # noqa: F811
    tests = Path(good_file_task.metadata["tests_dir"], "test.sh")
    tests.write_text("if [ -e /app/slow ]; then sleep 60; fi\n" + tests.read_text())
    policy = WritesBySeed(tokenizer)
    markers = lambda: [policy.slow_sandbox, "/tests/test.sh"] if policy.slow_sandbox else None  # noqa: E731
    with SandboxKiller(markers, running="sleep") as killer:  # while test.sh sleeps
        trajectories = run_episodes([good_file_task] * 4, policy, tokenizer, AgentConfig(), seeds=[0, 1, 2, 3])
    assert killer.killed is not None
    assert [t.failure_mode for t in trajectories] == ["verifier_killed", None, "wrong_answer", None]
    assert [t.reward.value for t in trajectories] == [0.0, 1.0, 0.0, 1.0]  # episode 0's 0 is no verdict
    group = EpisodeGroup(good_file_task, trajectories)
    with pytest.raises(InfraFailed, match="verifier_killed in 1 of 4 episodes"):
        raise_if_infra_failed(group, 1, 4)
    raise_if_infra_failed(group, 4, 4)  # the last attempt keeps it, episode 0 masked

    record, samples, advantages = score_step(config(advantage, False), [group])
    alone, alone_samples, alone_advantages = score_step(
        config(advantage, False), [EpisodeGroup(good_file_task, trajectories[1:])]
    )
    assert torch.allclose(advantages[0, 1:], alone_advantages[0]) and advantages[0, 0] == 0.0
    assert len(samples) == 3 and [(s.completion_ids, s.advantage) for s in samples] == [
        (s.completion_ids, s.advantage) for s in alone_samples
    ]
    assert record["reward_mean"] == alone["reward_mean"] == pytest.approx(2 / 3)
    assert record["episodes_masked"] == 1.0 and record["masked/verifier_killed"] == 1.0
