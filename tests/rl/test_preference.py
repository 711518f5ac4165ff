import math

import pytest
import torch

from posttrain.rl import dpo_loss, simpo_loss


def t(*values):
    return torch.tensor(values, dtype=torch.float64, requires_grad=True)


def test_dpo_loss_is_the_logistic_loss_of_the_scaled_log_ratio_margin():
    chosen, rejected = t(-10.0, -4.0), t(-12.0, -3.0)
    ref_chosen, ref_rejected = torch.tensor([-11.0, -4.0]), torch.tensor([-11.0, -4.0])
    loss, stats = dpo_loss(chosen, rejected, ref_chosen.double(), ref_rejected.double(), beta=0.5)
    # pair 1: 0.5 * ((-10 + 11) - (-12 + 11)) = 1.0; pair 2: 0.5 * ((-4 + 4) - (-3 + 4)) = -0.5
    expected = (math.log1p(math.exp(-1.0)) + math.log1p(math.exp(0.5))) / 2
    assert loss.item() == pytest.approx(expected, abs=1e-12)
    assert stats == {"reward_margin": pytest.approx(0.25), "accuracy": 0.5}
    loss.backward()
    # d loss / d logp_c = -beta * sigmoid(-margin) / B: raising the chosen lowers the loss
    assert chosen.grad[0].item() == pytest.approx(-0.5 * (1 / (1 + math.exp(1.0))) / 2, abs=1e-12)
    assert (chosen.grad < 0).all() and (rejected.grad > 0).all()
    assert torch.allclose(rejected.grad, -chosen.grad)


def test_dpo_loss_at_the_reference_is_log_two_and_takes_no_gradient_into_the_reference():
    chosen, rejected = t(-5.0), t(-7.0)
    ref_chosen, ref_rejected = t(-5.0), t(-7.0)
    loss, stats = dpo_loss(chosen, rejected, ref_chosen, ref_rejected)
    assert loss.item() == pytest.approx(math.log(2))
    assert stats["reward_margin"] == 0.0 and stats["accuracy"] == 0.0
    loss.backward()
    assert ref_chosen.grad is None and ref_rejected.grad is None


def test_simpo_loss_uses_length_normalised_log_probs_and_the_margin_gamma():
    chosen, rejected = t(-6.0), t(-20.0)
    loss, stats = simpo_loss(chosen, rejected, torch.tensor([3.0]), torch.tensor([10.0]), beta=2.0, gamma=0.5)
    # 2 * (-6 / 3) - 2 * (-20 / 10) = 0; minus gamma: -0.5
    assert loss.item() == pytest.approx(math.log1p(math.exp(0.5)), abs=1e-12)
    assert stats["reward_margin"] == pytest.approx(0.0)
    # the longer rejected response's sum is lower, but per token the two are the same: no preference yet
    loss.backward()
    assert chosen.grad.item() == pytest.approx(-2.0 / 3 * (1 / (1 + math.exp(-0.5))), abs=1e-12)


def test_simpo_loss_needs_no_reference_and_guards_an_empty_response():
    loss, _ = simpo_loss(t(-1.0), t(-1.0), torch.tensor([0.0]), torch.tensor([1.0]), beta=1.0, gamma=0.0)
    assert math.isfinite(loss.item())
