"""From a step's rollout groups to what the trainer learns from: rewards, group-relative
advantages (GRPO, RLOO, REINFORCE++), the dynamic-sampling filter, the step's reward metrics
and the rows stored in trajectories.sqlite. Part of every step of the driver."""

from __future__ import annotations

from collections import Counter

import torch

from posttrain.config import RunConfig
from posttrain.engine.interface import SamplingParams
from posttrain.pipeline.rollout import RolloutGroup
from posttrain.rl import (
    grpo_advantages,
    informative_groups,
    masked_group_advantages,
    masked_reinforce_pp_advantages,
    reinforce_pp_advantages,
    rloo_advantages,
)


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


def group_advantages(config: RunConfig, rewards: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """(advantages [G, n], kept groups [G]) when every sample counts."""
    keep = (
        informative_groups(rewards) if config.algorithm.dynamic_sampling else torch.ones(len(rewards), dtype=torch.bool)
    )
    advantages = torch.zeros_like(rewards)
    if bool(keep.any()):
        if config.algorithm.advantage == "reinforce_pp":
            advantages[keep] = compute_advantages(config, rewards[keep])
        else:
            advantages = compute_advantages(config, rewards)
            advantages[~keep] = 0.0
    return advantages, keep


def advantages_without_invalid(
    config: RunConfig, rewards: torch.Tensor, valid: torch.Tensor
) -> tuple[torch.Tensor, torch.Tensor]:
    """(advantages, kept groups) as if the invalid samples had never been drawn: each group
    re-normalised over its valid samples, a group left with fewer than two dropped."""
    keep = valid.sum(dim=1) >= 2
    if config.algorithm.dynamic_sampling:
        keep &= informative_groups(rewards, valid=valid)
    mask = valid & keep.unsqueeze(1)
    if config.algorithm.advantage == "reinforce_pp":  # batch-wide: not a function of one group
        return masked_reinforce_pp_advantages(rewards, mask), keep
    return masked_group_advantages(rewards, mask, lambda group: compute_advantages(config, group)), keep


def score_step(config: RunConfig, groups: list[RolloutGroup]):
    """(metrics record, training samples, advantages [groups x samples]). Samples a group marks
    invalid (episodes that measured the infrastructure) are left out of everything: the
    advantages, the samples and the reward metrics are those of the step without them."""
    rewards = torch.tensor([g.reward_values for g in groups], dtype=torch.float32)
    valid = torch.tensor([g.valid for g in groups], dtype=torch.bool).reshape(rewards.shape)
    if bool(valid.all()):
        advantages, keep = group_advantages(config, rewards)
    else:
        advantages, keep = advantages_without_invalid(config, rewards, valid)
    samples = [sample for gi, g in enumerate(groups) if keep[gi] for sample in g.train_samples(advantages[gi].tolist())]
    counted = int(valid.sum())
    counted_rewards = rewards if counted == rewards.numel() else rewards[valid]
    record: dict = {
        "reward_mean": float(counted_rewards.mean()) if counted else 0.0,
        "pass_rate": sum(r.passed for g in groups for r, ok in zip(g.rewards, g.valid) if ok) / max(counted, 1),
        "groups_kept": int(keep.sum()),
        "groups": len(groups),
        "completion_len_mean": sum(g.generated_tokens() for g in groups) / max(rewards.numel(), 1),
        "truncated_fraction": sum(g.truncated() for g in groups) / max(rewards.numel(), 1),
    }
    record.update(reward_function_metrics([r for g in groups for r in g.rewards]))
    record.update(reward_errors_by_domain(groups))
    record.update(masked_metrics([reason for g in groups for reason in g.masked_reasons()]))
    by_domain: dict[str, list[float]] = {}
    for g in groups:
        by_domain.setdefault(g.task.domain, []).extend(v for v, ok in zip(g.reward_values, g.valid) if ok)
    record.update({f"reward/{d}": sum(v) / len(v) for d, v in sorted(by_domain.items()) if v})
    tokens: dict[str, int] = {}
    for gi, g in enumerate(groups):
        if keep[gi]:  # what the trainer trains on
            tokens[g.task.domain] = tokens.get(g.task.domain, 0) + g.generated_tokens()
    total = sum(tokens.values()) or 1
    record.update({f"mixture/{d}/token_share": tokens.get(d, 0) / total for d in sorted(by_domain)})
    return record, samples, advantages


def masked_metrics(reasons: list[str]) -> dict[str, float]:
    """`episodes_masked` and `masked/<failure mode>`: the step's episodes left out because they
    measured the infrastructure (recorded only on steps that had any)."""
    if not reasons:
        return {}
    counts = Counter(reasons)
    return {"episodes_masked": float(len(reasons)), **{f"masked/{k}": float(v) for k, v in sorted(counts.items())}}


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


def reward_errors_by_domain(groups) -> dict[str, float]:
    """`reward_errors/<domain>`: per domain, the step's samples whose verifier raised or hung
    (recorded only for domains that had any)."""
    counts: Counter = Counter()
    for g in groups:
        counts[g.task.domain] += sum(bool(r.details.get("reward_errors")) for r in g.rewards)
    return {f"reward_errors/{d}": float(n) for d, n in sorted(counts.items()) if n}


class RewardErrorLog:
    """One console line per domain, the first time a sample of it has a verifier error (the
    count per step is in the record): a hundred domains with one broken scorer stay readable."""

    def __init__(self) -> None:
        self.reported: set[str] = set()

    def new_lines(self, groups) -> list[str]:
        lines = []
        for g in groups:
            domain = g.task.domain
            errors = [e for r in g.rewards for e in r.details.get("reward_errors", [])]
            if errors and domain not in self.reported:
                self.reported.add(domain)
                lines.append(
                    f"domain {domain!r}: its verifier failed on a sample, which scores 0 ({errors[0]}); "
                    f"counted per step as reward_errors/{domain}, the run goes on"
                )
        return lines


def trajectory_rows(groups, advantages: torch.Tensor):
    for gi, g in enumerate(groups):
        yield from g.store_rows(advantages[gi].tolist())
