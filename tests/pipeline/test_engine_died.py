"""The rollout engine failing mid-episode is an infrastructure failure, never a zero reward: an
engine process that dies under a terminal rollout (what an engine replica's death looks like to
a rollout worker: its connection drops) and a driver engine whose step raises (the calls in
flight fail) both end the episodes as `engine_error`, unverified. The job fails and the
dispatcher runs the group again; on its last attempt the group comes back and the step leaves
those episodes out of everything it trains on."""

from __future__ import annotations

import multiprocessing
import os
import signal

import pytest

from posttrain.agent.loop import AgentConfig
from posttrain.dispatch import Executor, Job, RetryPolicy
from posttrain.dispatch.job import JobContext
from posttrain.dispatch.thread_worker import ThreadWorkerFactory
from posttrain.engine.interface import SamplingParams
from posttrain.engine.service.transport import EngineClient
from posttrain.faults import TRIGGER_ENV
from posttrain.pipeline.rollout_job import InfraFailed, RolloutJob, StreamSlot, run_rollout_job
from posttrain.pipeline.step_scoring import score_step
from tests.agent.conftest import good_file_task, needs_bwrap  # noqa: F401 - fixtures
from tests.pipeline.test_infra_masking import config

GROUP = 3
# the engine dies at its 12th step: the first turn's replies (8 tokens each, a step per token)
# are done, the second turn's are being generated
DIES_AT_STEP = 12


def serve_tiny_engine(faults: str, conn) -> None:
    """An engine service in a process of its own (as a replica is), dying as `faults` says."""
    os.environ["POSTTRAIN_FAULTS"] = faults
    import torch

    from posttrain.engine.builtin.engine import BuiltinEngine
    from posttrain.engine.service.engine_service import EngineService
    from posttrain.models.loading import load_model, load_tokenizer

    torch.set_num_threads(1)
    service = EngineService(BuiltinEngine(load_model("tiny-llama", seed=0), load_tokenizer("tiny-llama")))
    client = service.client()
    conn.send((client.address, client.authkey))
    try:
        conn.recv()  # serve until the test hangs up (or the fault kills this process)
    except EOFError:
        pass
    service.close()


def rollout(task, engine, attempts: int) -> RolloutJob:
    return RolloutJob(
        task=task,
        stream=StreamSlot(1, 0),
        params=SamplingParams(n=GROUP, temperature=1.0, max_tokens=8),
        seed=0,
        engine=engine,
        tokenizer="tiny-llama",
        agent=AgentConfig(max_steps=3, reply_tokens=8, max_context_tokens=2048, retry_backoff_s=0.01),
        attempts=attempts,
    )


@pytest.fixture
def dying_engine():
    """() -> (EngineClient, process) of an engine service that SIGKILLs itself at DIES_AT_STEP."""
    spawn = multiprocessing.get_context("spawn")
    started = []

    def start():
        mine, theirs = spawn.Pipe()
        process = spawn.Process(target=serve_tiny_engine, args=(f"die:engine_step@{DIES_AT_STEP}", theirs))
        process.start()
        started.append((process, mine))
        assert mine.poll(300), "the engine process did not start"
        address, authkey = mine.recv()
        return EngineClient(address, authkey), process

    yield start
    for process, conn in started:
        conn.close()
        process.join(timeout=30)
        if process.is_alive():
            process.kill()
            process.join()


def test_an_engine_process_that_dies_mid_episode_fails_the_rollout(good_file_task, dying_engine):  # noqa: F811
    engine, process = dying_engine()
    with pytest.raises(InfraFailed, match=f"engine_error in {GROUP} of {GROUP} episodes"):
        run_rollout_job(rollout(good_file_task, engine, attempts=2), JobContext("1:0#1", 1, "w"))
    process.join(timeout=30)
    assert process.exitcode == -signal.SIGKILL  # it died at the fault point, mid-generation


def test_on_the_last_attempt_the_dead_engines_episodes_are_masked_not_zeros(good_file_task, dying_engine):  # noqa: F811
    engine, process = dying_engine()
    group = run_rollout_job(rollout(good_file_task, engine, attempts=1), JobContext("1:0#1", 1, "w"))
    process.join(timeout=30)
    assert process.exitcode == -signal.SIGKILL
    for trajectory in group.trajectories:
        assert trajectory.failure_mode == "engine_error" and trajectory.infra_failed
        assert len(trajectory.turns) >= 1  # it died mid-episode, after a turn whose tools ran
        assert "lost the connection to the engine service" in trajectory.error
        assert trajectory.reward.details["error"].startswith("not verified")  # no verifier ran on it
    record, samples, advantages = score_step(config("grpo", False), [group])
    assert record["episodes_masked"] == GROUP and record["masked/engine_error"] == GROUP
    assert record["groups_kept"] == 0 and samples == [] and not advantages.any()


def test_a_driver_engine_step_that_fails_mid_episode_is_retried_not_trained_on(
    good_file_task,  # noqa: F811
    tiny_model,
    tokenizer,
    tmp_path,
    monkeypatch,  # noqa: F811
):
    """The in-process engine service (the driver's engine, which rollout workers reach over its
    socket) fails one step on demand, through a trigger file: the calls in flight fail, the job
    fails as an infrastructure failure, and its retry trains a whole, healthy group."""
    from posttrain.engine.builtin.engine import BuiltinEngine
    from posttrain.engine.service.engine_service import EngineService

    triggers = tmp_path / "triggers"
    triggers.mkdir()
    monkeypatch.setenv(TRIGGER_ENV, str(triggers))
    service = EngineService(BuiltinEngine(tiny_model, tokenizer))
    (triggers / "raise-engine_step").touch()  # the job's first engine step fails
    executor = Executor(
        ThreadWorkerFactory(run_rollout_job), workers=1, retry=RetryPolicy(max_attempts=2, backoff_s=0.01)
    )
    try:
        executor.submit(Job("1:0#1", rollout(good_file_task, service.client(), attempts=2)))
        result = executor.results.get(timeout=600)
    finally:
        executor.shutdown()
        service.close()
    assert not (triggers / "raise-engine_step").exists()  # consumed: one fault
    assert result.ok and result.job.attempts == 1 and executor.stats.retries == 1  # one failed attempt
    assert f"engine_error in {GROUP} of {GROUP} episodes" in result.job.errors[0]
    assert "engine step failed" in result.job.errors[0]
    assert [t.failure_mode for t in result.value.trajectories if t.infra_failed] == []
