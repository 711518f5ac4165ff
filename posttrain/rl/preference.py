"""Preference losses on pairs of responses to one prompt: the chosen one and the rejected one.

Shapes: every argument is [B], one value per pair. logps are sums of the response tokens'
log-probabilities under the policy (prompt tokens excluded); ref_logps the same under the frozen
reference model, constants (computed without grad). Both losses return (scalar loss, stats):
the loss is the mean over the B pairs; stats has reward_margin (the mean implicit reward of the
chosen minus the rejected response) and accuracy (the share of pairs whose margin is positive).
"""

import torch
import torch.nn.functional as F
from torch import Tensor

PREFERENCE_LOSSES = ("dpo", "simpo")


@torch.no_grad()
def _stats(margin: Tensor) -> dict[str, float]:
    return {"reward_margin": margin.mean().item(), "accuracy": (margin > 0).float().mean().item()}


def dpo_loss(
    chosen_logps: Tensor, rejected_logps: Tensor, ref_chosen_logps: Tensor, ref_rejected_logps: Tensor, beta=0.1
) -> tuple[Tensor, dict[str, float]]:
    """DPO (Rafailov et al. 2023):

        r_c  = beta * (logp_c - ref_c)        the chosen response's implicit reward
        r_r  = beta * (logp_r - ref_r)        the rejected one's
        loss = mean( -log sigmoid(r_c - r_r) )

    beta sets how far the policy may move from the reference: small beta, a weak pull back."""
    margin = beta * ((chosen_logps - ref_chosen_logps.detach()) - (rejected_logps - ref_rejected_logps.detach()))
    return -F.logsigmoid(margin).mean(), _stats(margin)


def simpo_loss(
    chosen_logps: Tensor, rejected_logps: Tensor, chosen_lengths: Tensor, rejected_lengths: Tensor, beta=2.0, gamma=0.5
) -> tuple[Tensor, dict[str, float]]:
    """SimPO (Meng et al. 2024), reference-free, length-normalised:

        r_c  = beta / |y_c| * logp_c          the mean token log-prob of the chosen response, scaled
        r_r  = beta / |y_r| * logp_r
        loss = mean( -log sigmoid(r_c - r_r - gamma) )

    |y| counts the response's tokens; gamma is the target reward margin. No reference model:
    half the forward passes of DPO, and nothing keeps the policy near where it started."""
    chosen = beta * chosen_logps / chosen_lengths.clamp(min=1)
    rejected = beta * rejected_logps / rejected_lengths.clamp(min=1)
    margin = chosen - rejected
    return -F.logsigmoid(margin - gamma).mean(), _stats(margin)
