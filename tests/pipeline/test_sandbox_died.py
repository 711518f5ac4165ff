"""A terminal rollout whose sandbox dies mid-episode fails its job (the dispatcher runs the group
again) instead of being trained on as if the policy had failed; on the last attempt the group
comes back, the dead episode marked, for the step to leave out."""

import pytest

from posttrain.agent.loop import AgentConfig, run_episodes
from posttrain.agent.policies import Policy, Reply
from posttrain.agent.tool_calls import format_call
from posttrain.dispatch import Executor, Job, RetryPolicy
from posttrain.dispatch.thread_worker import ThreadWorkerFactory
from posttrain.pipeline.rollout_job import InfraFailed, raise_if_infra_failed
from posttrain.pipeline.terminal_rollout import EpisodeGroup
from tests.agent.conftest import good_file_task, needs_bwrap  # noqa: F401 - fixtures


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
