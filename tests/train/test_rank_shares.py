import pytest

from posttrain.train.rank_shares import rank_shares


@pytest.mark.parametrize(
    ("lengths", "world", "expected"),
    [
        ([10, 10, 10, 10], 2, [[0, 2], [1, 3]]),
        ([40, 10, 10, 10, 10], 2, [[0], [1, 2, 3, 4]]),  # one long sample balances four short ones
        ([5, 7], 3, [[1], [0], []]),  # fewer samples than ranks: the last rank idles
        ([3, 4, 5], 1, [[0, 1, 2]]),
        ([], 2, [[], []]),
    ],
)
def test_shares_balance_tokens_and_cover_every_sample_once(lengths, world, expected):
    shares = rank_shares(lengths, world)
    assert shares == expected
    assert sorted(i for share in shares for i in share) == list(range(len(lengths)))


def test_a_world_of_no_ranks_is_refused():
    with pytest.raises(ValueError, match="world_size"):
        rank_shares([1], 0)
