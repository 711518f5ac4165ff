"""The signal check: K episodes of the current policy on each task. A task it always fails or
always passes gives GRPO no gradient (every advantage in the group is zero)."""

from __future__ import annotations

from posttrain.tasks.records import Task


def policy_pass_rates(
    tasks: list[Task],
    model_spec: str,
    samples: int,
    *,
    max_steps: int = 10,
    reply_tokens: int = 256,
    temperature: float = 1.0,
    concurrency: int = 8,
    seed: int = 0,
    backend: str | None = None,
    on_episode=None,
) -> dict[str, tuple[int, int]]:
    """task id -> (episodes passed, episodes run), sampling the policy `samples` times per task."""
    from posttrain.agent.loop import AgentConfig, run_episodes
    from posttrain.agent.policies import ModelPolicy
    from posttrain.engine.factory import engine_for_spec
    from posttrain.engine.interface import SamplingParams

    if not tasks:
        return {}
    engine, tokenizer, limit = engine_for_spec(model_spec, concurrency=concurrency)
    policy = ModelPolicy(engine, tokenizer, SamplingParams(temperature=temperature, max_tokens=reply_tokens))
    repeated = [task for task in tasks for _ in range(samples)]
    seeds = [seed * 1_000_003 + index for index in range(len(repeated))]
    config = AgentConfig(
        max_steps=max_steps, reply_tokens=reply_tokens, **({"max_context_tokens": limit} if limit else {})
    )
    # episodes are cheap next to the model: many at once keep the engine's batches full
    trajectories = run_episodes(
        repeated,
        policy,
        tokenizer,
        config,
        backend=backend,
        seeds=seeds,
        max_live=max(concurrency, min(len(repeated), 32)),
        on_episode_end=on_episode,
    )
    rates: dict[str, tuple[int, int]] = {}
    for task, trajectory in zip(repeated, trajectories):
        passed, total = rates.get(task.id, (0, 0))
        ok = bool(trajectory.reward and trajectory.reward.passed)
        rates[task.id] = (passed + ok, total + 1)
    return rates
