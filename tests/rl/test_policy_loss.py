import math

import pytest
import torch

from posttrain.rl import gspo_loss, ppo_clip_loss


def close(actual, expected, atol=1e-5):
    torch.testing.assert_close(
        torch.as_tensor(actual, dtype=torch.float64), torch.tensor(expected, dtype=torch.float64), atol=atol, rtol=0
    )


def logprobs_for(ratios):
    """Current log-probs such that exp(lp - old) = ratios, with old = 0."""
    lp = torch.log(torch.tensor(ratios, dtype=torch.float64)).requires_grad_()
    return lp, torch.zeros_like(lp)


def test_ppo_clip_branches_for_both_signs():
    # four 1-token sequences, clip 0.2 -> range [0.8, 1.2]
    lp, old = logprobs_for([[1.5], [0.5], [1.5], [0.5]])
    adv = torch.tensor([1.0, 1.0, -1.0, -1.0], dtype=torch.float64)
    mask = torch.ones(4, 1)
    loss, stats = ppo_clip_loss(lp, old, adv, mask)
    # r=1.5, A=+1: min(1.5, 1.2) = 1.2   clipped   -> loss -1.2, grad 0
    # r=0.5, A=+1: min(0.5, 0.8) = 0.5   unclipped -> loss -0.5, grad -A*r/4 = -0.125
    # r=1.5, A=-1: min(-1.5, -1.2) = -1.5 unclipped -> loss  1.5, grad -A*r/4 =  0.375
    # r=0.5, A=-1: min(-0.5, -0.8) = -0.8 clipped   -> loss  0.8, grad 0
    # token_mean: (-1.2 - 0.5 + 1.5 + 0.8) / 4 = 0.15
    close(loss, 0.15)
    loss.backward()
    close(lp.grad, [[0.0], [-0.125], [0.375], [0.0]])
    assert stats["clip_fraction"] == 0.5
    close(stats["ratio_mean"], 1.0)  # (1.5 + 0.5 + 1.5 + 0.5) / 4
    close(stats["ratio_max"], 1.5)


def test_ppo_clip_higher_is_asymmetric():
    lp, old = logprobs_for([[1.25], [0.75]])
    adv = torch.tensor([1.0, -1.0], dtype=torch.float64)
    mask = torch.ones(2, 1)
    # symmetric 0.2: r=1.25, A=+1 -> min(1.25, 1.2) = 1.2 clipped; r=0.75, A=-1 -> min(-.75, -.8) = -.8 clipped
    #   loss (-1.2 + 0.8) / 2 = -0.2, both clipped
    loss, stats = ppo_clip_loss(lp, old, adv, mask, clip_low=0.2, clip_high=0.2)
    close(loss, -0.2)
    assert stats["clip_fraction"] == 1.0
    # clip-higher 0.28: 1.25 < 1.28 so the A>0 token is free; the low side is unchanged
    #   loss (-1.25 + 0.8) / 2 = -0.225, grad on token 0 = -A*r/2 = -0.625
    loss, stats = ppo_clip_loss(lp, old, adv, mask, clip_low=0.2, clip_high=0.28)
    close(loss, -0.225)
    assert stats["clip_fraction"] == 0.5
    loss.backward()
    close(lp.grad, [[-0.625], [0.0]])


def test_ppo_sequence_and_token_advantages():
    lp, old = logprobs_for([[1.0, 1.1]])
    mask = torch.ones(1, 2)
    # A = 2 broadcast: losses [-2, -2.2] (both in range) -> mean -2.1
    loss, stats = ppo_clip_loss(lp, old, torch.tensor([2.0], dtype=torch.float64), mask)
    close(loss, -2.1)
    assert stats["clip_fraction"] == 0.0
    # per-token A = [2, -1]: losses [-2, 1.1] -> mean -0.45
    loss, _ = ppo_clip_loss(lp, old, torch.tensor([[2.0, -1.0]], dtype=torch.float64), mask)
    close(loss, -0.45)


def test_ppo_token_weights_scale_loss_and_stay_constant():
    lp, old = logprobs_for([[1.0, 1.1]])
    weights = torch.tensor([[0.5, 2.0]], dtype=torch.float64, requires_grad=True)
    # losses [-2, -2.2] * [0.5, 2] = [-1, -4.4] -> mean -2.7
    loss, _ = ppo_clip_loss(lp, old, torch.tensor([2.0], dtype=torch.float64), torch.ones(1, 2), token_weights=weights)
    close(loss, -2.7)
    loss.backward()
    assert weights.grad is None
    close(lp.grad, [[-0.5, -2.2]])  # -w*A*r/2: [-.5*2*1/2, -2*2*1.1/2]


def test_ppo_padding_is_ignored_even_if_infinite():
    lp = torch.tensor([[math.log(1.1), -math.inf]], dtype=torch.float64, requires_grad=True)
    old = torch.tensor([[0.0, 0.0]], dtype=torch.float64)
    mask = torch.tensor([[1, 0]])
    loss, stats = ppo_clip_loss(lp, old, torch.tensor([1.0], dtype=torch.float64), mask)
    close(loss, -1.1)  # only the real token: -min(1.1, 1.1)
    loss.backward()
    assert torch.isfinite(lp.grad).all()
    close(stats["ratio_max"], 1.1)


def test_ppo_seq_mean_aggregation_with_normalizer():
    lp, old = logprobs_for([[1.0, 1.1], [1.0, 1.0]])
    mask = torch.tensor([[1, 1], [1, 0]])
    adv = torch.tensor([1.0, 1.0], dtype=torch.float64)
    # seq 0 mean (-1 - 1.1) / 2 = -1.05, seq 1 -1 -> (-2.05) / 2 = -1.025, or -2.05 / 5 with normalizer 5
    close(ppo_clip_loss(lp, old, adv, mask, aggregation="seq_mean")[0], -1.025)
    close(ppo_clip_loss(lp, old, adv, mask, aggregation="seq_mean", normalizer=5.0)[0], -0.41)


def test_gspo_sequence_ratio_and_gradient():
    # log-ratios [0.1, -0.3] -> s = exp((0.1 - 0.3) / 2) = exp(-0.1) = 0.904837
    # A = +1, range [1 - 3e-4, 1 + 4e-4]: min(0.904837, 0.9997) = 0.904837, unclipped
    # loss = -0.904837; d loss / d lp_t = -A * s / |y| = -0.452419 for both tokens
    lp = torch.tensor([[0.1, -0.3]], dtype=torch.float64, requires_grad=True)
    old = torch.zeros(1, 2, dtype=torch.float64)
    adv = torch.tensor([1.0], dtype=torch.float64)
    loss, stats = gspo_loss(lp, old, adv, torch.ones(1, 2))
    close(loss, -0.904837)
    loss.backward()
    close(lp.grad, [[-0.452419, -0.452419]])
    close(stats["ratio_mean"], 0.904837)
    assert stats["clip_fraction"] == 0.0

    # the same gradient from the plain sequence-level objective -s * A
    lp_seq = lp.detach().clone().requires_grad_()
    (-torch.exp((lp_seq - old).mean()) * adv).sum().backward()
    torch.testing.assert_close(lp.grad, lp_seq.grad)


def test_gspo_clipping_depends_on_advantage_sign():
    # log-ratios [0.002, 0] -> s = exp(0.001) = 1.0010005 > 1 + 4e-4
    lp = torch.tensor([[0.002, 0.0]], dtype=torch.float64, requires_grad=True)
    old = torch.zeros(1, 2, dtype=torch.float64)
    # A = +1: min(1.0010005, 1.0004) -> clipped, loss -1.0004, no gradient
    loss, stats = gspo_loss(lp, old, torch.tensor([1.0], dtype=torch.float64), torch.ones(1, 2))
    close(loss, -1.0004, atol=1e-9)
    assert stats["clip_fraction"] == 1.0
    loss.backward()
    close(lp.grad, [[0.0, 0.0]])
    # A = -1: min(-1.0010005, -1.0004) -> unclipped, loss 1.0010005, grad -A * s / 2 = 0.50050
    lp.grad = None
    loss, stats = gspo_loss(lp, old, torch.tensor([-1.0], dtype=torch.float64), torch.ones(1, 2))
    close(loss, 1.0010005, atol=1e-7)
    assert stats["clip_fraction"] == 0.0
    loss.backward()
    close(lp.grad, [[0.5005003, 0.5005003]], atol=1e-7)


def test_gspo_padding_and_normalizer():
    lp = torch.tensor([[0.1, -0.3], [0.0, -math.inf]], dtype=torch.float64, requires_grad=True)
    old = torch.zeros(2, 2, dtype=torch.float64)
    mask = torch.tensor([[1, 1], [1, 0]])
    adv = torch.tensor([1.0, -2.0], dtype=torch.float64)
    # seq 0: s = exp(-0.1) = 0.904837, A = 1 -> -0.904837
    # seq 1: one real token, s = 1, A = -2 -> min(-2, -2) = -2 -> 2
    # seq_mean: (2 - 0.904837) / 2 = 0.547581; with normalizer 4: 1.095163 / 4 = 0.273791
    loss, stats = gspo_loss(lp, old, adv, mask)
    close(loss, 0.547581)
    close(gspo_loss(lp, old, adv, mask, normalizer=4.0)[0], 0.273791)
    loss.backward()
    assert torch.isfinite(lp.grad).all()
    close(stats["ratio_mean"], (2 * 0.904837 + 1) / 3)  # over the 3 real tokens
    close(stats["ratio_max"], 1.0)


def test_gspo_token_weights():
    lp = torch.tensor([[0.1, -0.3]], dtype=torch.float64)
    old = torch.zeros(1, 2, dtype=torch.float64)
    w = torch.tensor([[1.0, 0.5]], dtype=torch.float64)
    # per-token losses -0.904837 * [1, 0.5], sequence mean -0.904837 * 0.75 = -0.678628
    loss, _ = gspo_loss(lp, old, torch.tensor([1.0], dtype=torch.float64), torch.ones(1, 2), token_weights=w)
    close(loss, -0.678628)


@pytest.mark.parametrize("loss_fn", [ppo_clip_loss, gspo_loss])
def test_all_padding_is_zero_loss(loss_fn):
    lp = torch.zeros(2, 3, requires_grad=True)
    loss, stats = loss_fn(lp, torch.zeros(2, 3), torch.tensor([1.0, -1.0]), torch.zeros(2, 3))
    assert loss.item() == 0.0
    assert stats == {"clip_fraction": 0.0, "ratio_mean": 0.0, "ratio_max": 0.0}
