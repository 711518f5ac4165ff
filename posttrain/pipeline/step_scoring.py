"""From a step's rollout groups to what the trainer learns from: rewards, group-relative
advantages (GRPO, RLOO, REINFORCE++), the dynamic-sampling filter, the step's reward metrics
and the rows stored in trajectories.sqlite. Part of every step of the driver."""

from __future__ import annotations

import torch

from posttrain.config import RunConfig
from posttrain.engine.interface import SamplingParams
from posttrain.pipeline.rollout import RolloutGroup
from posttrain.rl import grpo_advantages, informative_groups, reinforce_pp_advantages, rloo_advantages


def sampling_params(config: RunConfig) -> SamplingParams:
    return SamplingParams(
        n=config.rollout.group_size,
        temperature=config.rollout.temperature,
        top_p=config.rollout.top_p,
        top_k=config.rollout.top_k,
        max_tokens=config.rollout.max_new_tokens,
    )


def compute_advantages(config: RunConfig, rewards: torch.Tensor) -> torch.Tensor:
    algo = config.algorithm
    if algo.advantage == "grpo":
        return grpo_advantages(rewards, normalize_std=algo.normalize_std)
    if algo.advantage == "rloo":
        return rloo_advantages(rewards)
    return reinforce_pp_advantages(rewards)


def score_step(config: RunConfig, groups: list[RolloutGroup]):
    """(metrics record, training samples, advantages [groups x samples])."""
    rewards = torch.tensor([g.reward_values for g in groups], dtype=torch.float32)
    keep = (
        informative_groups(rewards) if config.algorithm.dynamic_sampling else torch.ones(len(groups), dtype=torch.bool)
    )
    advantages = torch.zeros_like(rewards)
    if bool(keep.any()):
        if config.algorithm.advantage == "reinforce_pp":
            advantages[keep] = compute_advantages(config, rewards[keep])
        else:
            advantages = compute_advantages(config, rewards)
            advantages[~keep] = 0.0
    samples = [sample for gi, g in enumerate(groups) if keep[gi] for sample in g.train_samples(advantages[gi].tolist())]
    record: dict = {
        "reward_mean": float(rewards.mean()),
        "pass_rate": sum(r.passed for g in groups for r in g.rewards) / max(rewards.numel(), 1),
        "groups_kept": int(keep.sum()),
        "groups": len(groups),
        "completion_len_mean": sum(g.generated_tokens() for g in groups) / max(rewards.numel(), 1),
        "truncated_fraction": sum(g.truncated() for g in groups) / max(rewards.numel(), 1),
    }
    record.update(reward_function_metrics([r for g in groups for r in g.rewards]))
    by_domain: dict[str, list[float]] = {}
    for g in groups:
        by_domain.setdefault(g.task.domain, []).extend(g.reward_values)
    record.update({f"reward/{d}": sum(v) / len(v) for d, v in sorted(by_domain.items())})
    tokens: dict[str, int] = {}
    for gi, g in enumerate(groups):
        if keep[gi]:  # what the trainer trains on
            tokens[g.task.domain] = tokens.get(g.task.domain, 0) + g.generated_tokens()
    total = sum(tokens.values()) or 1
    record.update({f"mixture/{d}/token_share": tokens.get(d, 0) / total for d in sorted(by_domain)})
    return record, samples, advantages


def reward_function_metrics(rewards) -> dict[str, float]:
    """`reward_errors`: samples whose reward function raised, hung or returned something out
    of range (each scored 0; the message is in the sample's details); the mean of each extra
    metric the functions returned, as `reward_extra/<name>`."""
    record = {"reward_errors": float(sum(bool(r.details.get("reward_errors")) for r in rewards))}
    extras: dict[str, list[float]] = {}
    for reward in rewards:
        for name, value in reward.details.get("reward_extras", {}).items():
            extras.setdefault(name, []).append(value)
    record.update({f"reward_extra/{name}": sum(v) / len(v) for name, v in sorted(extras.items())})
    return record


def trajectory_rows(groups, advantages: torch.Tensor):
    for gi, g in enumerate(groups):
        yield from g.store_rows(advantages[gi].tolist())
