"""A model policy on the builtin engine: long episodes reuse the prompt prefix from the cache."""

import copy

from posttrain.agent.loop import AgentConfig, run_episodes
from posttrain.agent.policies import ModelPolicy
from posttrain.engine.builtin.engine import BuiltinEngine
from posttrain.engine.interface import SamplingParams
from posttrain.tasks.harbor import load_harbor_task
from tests.agent.conftest import SUITE


def test_a_20_turn_episode_is_served_mostly_from_the_prefix_cache(tiny_model, tokenizer, needs_bwrap):
    engine = BuiltinEngine(copy.deepcopy(tiny_model), tokenizer, num_blocks=1024)
    policy = ModelPolicy(engine, tokenizer, SamplingParams(temperature=1.0, max_tokens=16), seed=0)
    task = load_harbor_task(SUITE / "hello-file")
    trajectory = run_episodes([task], policy, tokenizer, AgentConfig(max_steps=20, reply_tokens=16, wall_time_s=900))[0]
    assert len(trajectory.turns) == 20 and trajectory.stop_reason == "max_steps"
    assert trajectory.summary()["prefix_hit_rate"] == trajectory.prefix_hit_rate >= 0.8
    assert all(t.cached_prompt_tokens > 0 for t in trajectory.turns[1:])
    # token in, token out: every turn's reply is exactly what the engine generated, with its logprobs
    assert all(len(t.completion_ids) == len(t.logprobs) > 0 for t in trajectory.turns)
    assert not trajectory.reward.passed  # random weights do not solve tasks
