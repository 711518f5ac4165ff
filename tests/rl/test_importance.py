import math

import pytest
import torch

from posttrain.rl import truncated_importance_weights


def test_weights_are_truncated_at_the_cap():
    trainer = torch.tensor([[math.log(0.5), 0.0, math.log(3.0)]], requires_grad=True)
    engine = torch.zeros(1, 3)
    # ratios exp(trainer - engine) = [0.5, 1, 3] -> min(., 2) = [0.5, 1, 2]
    w = truncated_importance_weights(trainer, engine)
    torch.testing.assert_close(w, torch.tensor([[0.5, 1.0, 2.0]]))
    assert not w.requires_grad
    # cap 1: [0.5, 1, 1]
    torch.testing.assert_close(truncated_importance_weights(trainer, engine, cap=1.0), torch.tensor([[0.5, 1.0, 1.0]]))


def test_ratio_is_trainer_over_engine():
    # trainer -1, engine -2: exp(-1 - (-2)) = e = 2.718 -> capped at 3 stays 2.718
    w = truncated_importance_weights(torch.tensor([[-1.0]]), torch.tensor([[-2.0]]), cap=3.0)
    torch.testing.assert_close(w, torch.tensor([[math.e]]))


@pytest.mark.parametrize("cap", [0.0, -1.0])
def test_non_positive_cap_rejected(cap):
    with pytest.raises(ValueError):
        truncated_importance_weights(torch.zeros(1, 2), torch.zeros(1, 2), cap=cap)
