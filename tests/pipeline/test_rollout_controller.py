"""The rollout controller on real parts: the tiny model behind the engine service, rollout jobs
on dispatch threads, the tiny config's reasoning-gym domains."""

import time

import pytest

from posttrain.config import load_config
from posttrain.dispatch.factory import make_executor
from posttrain.engine.builtin.engine import BuiltinEngine
from posttrain.engine.service.engine_service import EngineService
from posttrain.pipeline.build import build_mixture
from posttrain.pipeline.rollout_controller import RolloutController, RolloutPlan
from posttrain.pipeline.rollout_job import run_rollout_job
from posttrain.pipeline.step_scoring import sampling_params


@pytest.fixture
def controller(tiny_config, tiny_model, tokenizer):
    path = tiny_config(steps=4)
    config = load_config(path)
    server = EngineService(BuiltinEngine(tiny_model, tokenizer))
    executor = make_executor(run_rollout_job, workers=3)
    plan = RolloutPlan(sampling_params(config), config.seed, 3, "tiny-llama", None, None)
    made = RolloutController(
        plan, build_mixture(config, path.parent), executor, server.client(), max_staleness=1, last_step=4
    )
    made.server = server
    yield made
    executor.shutdown()
    server.close()


def test_admission_stays_within_eta_plus_one_steps_and_the_run(controller):
    controller.admit(0)
    assert controller.admitted_through == 2 and controller.in_flight == 6
    controller.admit(0)
    assert controller.admitted_through == 2  # nothing more until the trainer moves on
    controller.admit(5)
    assert controller.admitted_through == 4  # never past the last step


def test_stale_groups_are_regenerated_under_the_current_policy(controller):
    controller.admit(0)
    first = controller.next_batch(0)
    assert len(first) == 3 and all(e.head_version == 0 for e in first)
    deadline = time.monotonic() + 60
    while len(controller.buffer) < 3:  # the other step's groups finish under version 0
        assert time.monotonic() < deadline
        controller.collect(block=True)
    controller.server.set_version(3)  # the policy moved three versions past them
    second = controller.next_batch(3)
    assert controller.counters.regenerated == 3
    assert all(e.head_version == 3 for e in second)  # generated again, under version 3
    assert sorted(e.key for e in first + second) == sorted(f"{s}:{i}" for s in (1, 2) for i in range(3))
    assert controller.in_flight == 0 and len(controller.buffer) == 0


def test_state_round_trip_requeues_what_was_in_flight(controller):
    controller.admit(0)
    batch = controller.next_batch(0)
    state = controller.state_dict()
    trained = {e.key for e in batch}
    saved = {s["stream"] for s in state["slots"]}
    assert saved.isdisjoint(trained) and len(saved) == 3 and state["admitted_through"] == 2
    executor = make_executor(run_rollout_job, workers=2)  # a resumed run has a fresh dispatcher
    try:
        restored = RolloutController(
            controller.plan, controller.mixture, executor, controller.engine, max_staleness=1, last_step=4
        )
        restored.load_state_dict(state)
        assert restored.counters.requeued_on_resume == sum(s["in_flight"] for s in state["slots"])
        got = restored.next_batch(0)
        assert {e.key for e in got} == saved
    finally:
        executor.shutdown()
