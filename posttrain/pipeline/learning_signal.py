"""Whether a run can learn. Group-relative advantages are a sample's reward against its group's:
a group whose rewards are all equal teaches nothing, and dynamic sampling drops it. Some
settings make every group so (`cannot_learn`, said by `--check` and at a run's start); and while
a run goes, `NoUpdateWatch` says when steps in a row made no update, why, and what to change.
"""

from __future__ import annotations

from collections.abc import Callable

from posttrain.config import RunConfig

PATIENCE = 3  # steps in a row without an update before the run says so


def cannot_learn(config: RunConfig) -> list[str]:
    """Settings under which no step can update the policy (or a domain's samples never count),
    each with what to change."""
    algo, rollout = config.algorithm, config.rollout
    found = []
    if rollout.group_size == 1:
        if algo.dynamic_sampling:
            found.append(
                "rollout.group_size = 1: dynamic sampling keeps only groups whose rewards differ, and a group "
                "of one sample never does, so no step updates the policy; set group_size to 2 or more (e.g. 8)"
            )
        elif algo.loss != "nll":
            found.append(
                f"rollout.group_size = 1 with algorithm.advantage = {algo.advantage!r}: a sample alone in its "
                "group has no baseline to differ from (its advantage is 0, or undefined), so no step updates the "
                "policy; set group_size to 2 or more (e.g. 8)"
            )
    elif rollout.top_k == 1 and algo.loss != "nll":
        found.append(
            "rollout.top_k = 1 samples greedily: the samples of a prompt are all the same, their rewards equal "
            "and every advantage 0, so no step updates the policy; set top_k = 0 (off) or above 1"
        )
    for domain in config.domains:
        if domain.verifier_weights and not any(domain.verifier_weights):
            found.append(
                f"domain {domain.name!r}: verifier_weights are all 0, so every reward is 0 and its groups never "
                "differ: it teaches nothing; give a verifier a weight above 0"
            )
    return found


class NoUpdateWatch:
    """Counts the steps in a row that made no update (no group kept, or every advantage 0) and,
    when a streak reaches `patience`, prints once why and what to change."""

    def __init__(self, config: RunConfig, log: Callable[[str], None], patience: int = PATIENCE) -> None:
        self.config, self.log, self.patience = config, log, patience
        self.streak: list[int] = []

    def observe(self, step: int, record: dict, groups, advantages) -> None:
        if record.get("groups_kept") and bool(advantages.abs().sum() > 0):
            self.streak = []
            return
        self.streak.append(step)
        if len(self.streak) == self.patience:
            self.log(self.warning(groups))

    def warning(self, groups) -> str:
        first, last = self.streak[0], self.streak[-1]
        dropped = (
            "dynamic sampling dropped every group"
            if self.config.algorithm.dynamic_sampling
            else "every advantage was 0"
        )
        return (
            f"warning: steps {first}-{last} made no update: {dropped}, because each group's samples "
            f"scored alike; {self.remedy(groups)}"
        )

    def remedy(self, groups) -> str:
        rollout = self.config.rollout
        rewards = [r for g in groups for r in g.reward_values]
        if rollout.group_size == 1:
            return "a group of one sample never differs: set rollout.group_size to 2 or more (e.g. 8)"
        if rewards and max(rewards) == min(rewards) and not 0 < max(rewards) < 1:
            if max(rewards) <= 0:
                truncated = sum(g.truncated() for g in groups) / len(rewards)
                return (
                    f"every sample scored {max(rewards):g}: the tasks are too hard for the model, or its answers "
                    "are not read right. Look at a few completions (posttrain trajectories export RUN), check "
                    f"the domain's prompt_template and answer_extraction, or raise rollout.max_new_tokens "
                    f"({truncated:.0%} of the completions were cut off)"
                )
            return f"every sample scored {max(rewards):g}: the tasks are too easy for the model; use harder ones"
        return "the samples of a prompt agree: raise rollout.temperature or rollout.group_size so that they differ"
