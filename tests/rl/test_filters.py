import torch

from posttrain.rl import informative_groups


def test_informative_groups():
    rewards = torch.tensor(
        [
            [1.0, 1.0, 1.0],  # all correct -> no signal
            [0.0, 1.0, 0.0],  # mixed -> keep
            [0.5, 0.5, 0.5],  # all equal -> drop
            [0.0, 0.0, 1e-9],  # spread 1e-9 <= atol 1e-8 -> counts as equal
        ]
    )
    assert informative_groups(rewards).tolist() == [False, True, False, False]
    assert informative_groups(rewards, atol=0.0).tolist() == [False, True, False, True]
    assert informative_groups(rewards).dtype == torch.bool


def test_informative_groups_over_the_valid_samples_only():
    rewards = torch.tensor([[1.0, 1.0, 0.0], [1.0, 0.0, 0.0], [1.0, 1.0, 1.0]])
    valid = torch.tensor([[True, True, False], [True, True, False], [False, False, False]])
    # row 0 differs only in its invalid sample; row 2 has none valid
    assert informative_groups(rewards, valid=valid).tolist() == [False, True, False]
