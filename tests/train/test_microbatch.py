from posttrain.train.microbatch import token_budget_microbatches


def test_batches_respect_padded_budget_and_cover_everything():
    lengths = [10, 50, 20, 40, 30, 5]
    batches = token_budget_microbatches(lengths, max_tokens=80)
    assert sorted(i for b in batches for i in b) == list(range(6))
    for b in batches:
        assert max(lengths[i] for i in b) * len(b) <= 80
    # longest first: [50] alone (50+40 padded to 100 > 80), then [40, 30], then [20, 10, 5]
    assert batches == [[1], [3, 4], [2, 0, 5]]


def test_oversized_sequence_gets_its_own_batch():
    assert token_budget_microbatches([500, 3, 3], max_tokens=100) == [[0], [1, 2]]
