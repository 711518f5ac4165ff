"""RL post-training algorithms as small pure torch functions."""

from posttrain.rl.advantages import (
    grpo_advantages,
    masked_group_advantages,
    masked_reinforce_pp_advantages,
    reinforce_pp_advantages,
    rloo_advantages,
)
from posttrain.rl.aggregation import AGGREGATION_MODES, aggregate
from posttrain.rl.entropy import entropy_from_logits
from posttrain.rl.filters import informative_groups
from posttrain.rl.importance import truncated_importance_weights
from posttrain.rl.kl import kl_k1, kl_k3, kl_penalty
from posttrain.rl.policy_loss import gspo_loss, ppo_clip_loss
from posttrain.rl.preference import PREFERENCE_LOSSES, dpo_loss, simpo_loss
from posttrain.rl.supervised import nll_loss

__all__ = [
    "AGGREGATION_MODES",
    "PREFERENCE_LOSSES",
    "aggregate",
    "dpo_loss",
    "entropy_from_logits",
    "grpo_advantages",
    "gspo_loss",
    "informative_groups",
    "kl_k1",
    "kl_k3",
    "kl_penalty",
    "masked_group_advantages",
    "masked_reinforce_pp_advantages",
    "nll_loss",
    "ppo_clip_loss",
    "reinforce_pp_advantages",
    "rloo_advantages",
    "simpo_loss",
    "truncated_importance_weights",
]
