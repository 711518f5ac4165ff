import pytest
import torch

from posttrain.rl import grpo_advantages, reinforce_pp_advantages, rloo_advantages


def close(actual, expected, atol=1e-5):
    torch.testing.assert_close(actual, torch.tensor(expected, dtype=actual.dtype), atol=atol, rtol=0)


def test_grpo_std_normalized():
    rewards = torch.tensor([[1.0, 0.0, 0.0, 1.0], [0.0, 0.0, 0.0, 3.0], [2.0, 2.0, 2.0, 2.0]])
    # group 0: mean .5, centred +-.5, unbiased var (4 * .25) / 3 = 1/3, std 0.57735 -> +-0.86603
    # group 1: mean .75, centred [-.75, -.75, -.75, 2.25],
    #          unbiased var (3 * .5625 + 5.0625) / 3 = 2.25, std 1.5 -> [-.5, -.5, -.5, 1.5]
    # group 2: all equal -> 0 / (0 + eps) = 0
    close(
        grpo_advantages(rewards),
        [[0.86603, -0.86603, -0.86603, 0.86603], [-0.5, -0.5, -0.5, 1.5], [0.0, 0.0, 0.0, 0.0]],
    )


def test_grpo_without_std_is_dr_grpo():
    rewards = torch.tensor([[1.0, 0.0, 0.0, 1.0], [0.0, 0.0, 0.0, 3.0]])
    # just r - mean: group means .5 and .75
    close(
        grpo_advantages(rewards, normalize_std=False),
        [[0.5, -0.5, -0.5, 0.5], [-0.75, -0.75, -0.75, 2.25]],
        atol=1e-7,
    )


def test_grpo_input_checks():
    with pytest.raises(ValueError):
        grpo_advantages(torch.tensor([1.0, 0.0]))  # not [G, n]
    with pytest.raises(ValueError):
        grpo_advantages(torch.tensor([[1.0], [0.0]]))  # unbiased std of 1 sample is undefined
    # without the std, a single sample simply has advantage 0
    close(grpo_advantages(torch.tensor([[1.0], [0.0]]), normalize_std=False), [[0.0], [0.0]])


def test_rloo_leave_one_out():
    rewards = torch.tensor([[1.0, 0.0, 0.0, 1.0], [0.0, 0.0, 0.0, 3.0]])
    # group 0: A_0 = 1 - (0 + 0 + 1) / 3 = 2/3,  A_1 = 0 - (1 + 0 + 1) / 3 = -2/3
    # group 1: A_3 = 3 - (0 + 0 + 0) / 3 = 3,    A_0 = 0 - (0 + 0 + 3) / 3 = -1
    close(
        rloo_advantages(rewards),
        [[2 / 3, -2 / 3, -2 / 3, 2 / 3], [-1.0, -1.0, -1.0, 3.0]],
        atol=1e-6,
    )


def test_rloo_needs_two_samples():
    with pytest.raises(ValueError):
        rloo_advantages(torch.tensor([[1.0], [0.0]]))


def test_reinforce_pp_uses_batch_std():
    rewards = torch.tensor([[0.0, 1.0], [0.0, 3.0]])
    # group-centred: [[-.5, .5], [-1.5, 1.5]], batch mean 0
    # unbiased batch var (.25 + .25 + 2.25 + 2.25) / 3 = 5/3, std 1.290994
    # -> [[-.387298, .387298], [-1.161895, 1.161895]]: the 1:3 scale between groups survives
    close(reinforce_pp_advantages(rewards), [[-0.387298, 0.387298], [-1.161895, 1.161895]])
    # GRPO instead divides each group by its own std (both sqrt(.5) and sqrt(4.5)) -> +-0.7071 in both
    close(grpo_advantages(rewards), [[-0.70711, 0.70711], [-0.70711, 0.70711]])


def test_reinforce_pp_constant_group_stays_zero():
    rewards = torch.tensor([[1.0, 0.0], [3.0, 3.0]])
    # centred [[.5, -.5], [0, 0]]; batch var (.25 + .25) / 3 = 1/6, std .408248 -> +-1.224745
    close(reinforce_pp_advantages(rewards), [[1.224745, -1.224745], [0.0, 0.0]])


def test_masked_group_advantages_equal_those_of_the_groups_without_the_invalid_samples():
    from posttrain.rl import masked_group_advantages

    rewards = torch.tensor([[1.0, 0.0, 9.0, 1.0], [0.0, 0.5, 1.0, 9.0]])
    valid = torch.tensor([[True, True, False, True], [True, True, True, False]])
    for per_group in (grpo_advantages, rloo_advantages, lambda r: grpo_advantages(r, normalize_std=False)):
        masked = masked_group_advantages(rewards, valid, per_group)
        assert torch.equal(masked[0, valid[0]], per_group(torch.tensor([[1.0, 0.0, 1.0]]))[0])
        assert torch.equal(masked[1, valid[1]], per_group(torch.tensor([[0.0, 0.5, 1.0]]))[0])
        assert masked[0, 2] == 0 and masked[1, 3] == 0  # the 9s never counted


def test_masked_reinforce_pp_equals_the_batch_without_the_invalid_samples():
    from posttrain.rl import masked_reinforce_pp_advantages

    rewards = torch.tensor([[1.0, 0.0, 9.0, 1.0], [0.0, 0.5, 1.0, 9.0]])
    valid = torch.tensor([[True, True, False, True], [True, True, True, False]])
    removed = torch.tensor([[1.0, 0.0, 1.0], [0.0, 0.5, 1.0]])  # each group without its invalid sample
    masked = masked_reinforce_pp_advantages(rewards, valid)
    assert torch.allclose(masked[valid].reshape(2, 3), reinforce_pp_advantages(removed), atol=1e-6)
    everything = torch.ones_like(valid)
    assert torch.allclose(masked_reinforce_pp_advantages(rewards, everything), reinforce_pp_advantages(rewards))
    assert torch.equal(masked_reinforce_pp_advantages(rewards, torch.zeros_like(valid)), torch.zeros_like(rewards))
