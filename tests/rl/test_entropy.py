import math

import torch

from posttrain.rl import entropy_from_logits


def test_uniform_logits_give_log_vocab():
    # softmax of equal logits is uniform over V = 5: H = ln 5 = 1.609438, whatever the constant
    for c in (0.0, 7.0, -300.0):
        h = entropy_from_logits(torch.full((2, 3, 5), c))
        assert h.shape == (2, 3)
        torch.testing.assert_close(h, torch.full((2, 3), math.log(5)))


def test_two_outcome_entropy_is_stable_for_large_logits():
    # logits [0, ln 3] -> p = [.25, .75]: H = .25 ln 4 + .75 ln(4/3) = 0.346574 + 0.215762 = 0.562335
    for shift in (0.0, 1000.0):
        h = entropy_from_logits(torch.tensor([[shift, shift + math.log(3)]]))
        torch.testing.assert_close(h, torch.tensor([0.562335]), atol=1e-5, rtol=0)


def test_masked_vocab_entries_contribute_zero():
    logits = torch.tensor([[0.0, 0.0, -math.inf, -math.inf]], requires_grad=True)
    h = entropy_from_logits(logits)
    torch.testing.assert_close(h, torch.tensor([math.log(2)]))  # uniform over the 2 live entries
    h.sum().backward()  # gradients flow (no forced no_grad) and stay finite
    assert torch.isfinite(logits.grad).all()


def test_half_precision_is_upcast():
    h = entropy_from_logits(torch.zeros(1, 50_000, dtype=torch.bfloat16))
    assert h.dtype == torch.float32
    torch.testing.assert_close(h, torch.tensor([math.log(50_000)]))
