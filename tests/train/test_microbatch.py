from posttrain.train.microbatch import shared_prompt_microbatches, token_budget_microbatches


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


def test_a_shared_prefix_counts_once_in_the_budget():
    # padded 4 x 100 = 400 > 250, but with 80 shared tokens: 80 + 4 x 20 = 160
    assert token_budget_microbatches([100, 100, 100, 100], max_tokens=250, shared=80) == [[0, 1, 2, 3]]
    assert token_budget_microbatches([100, 100, 100, 100], max_tokens=250) == [[0, 1], [2, 3]]


def test_groups_sharing_a_prompt_are_batched_apart_and_lone_prompts_together():
    a, b = [1] * 50, [2] * 50
    prompts = [a, b, a, [3], b, [4], a]
    lengths = [60, 70, 65, 10, 55, 12, 52]
    batches = shared_prompt_microbatches(prompts, lengths, max_tokens=100)
    assert batches == [[2, 0, 6], [1, 4], [5, 3]]
    # 50 shared + 3 x 15 = 95 fits; a fourth sample of the group would not
    assert shared_prompt_microbatches([a] * 4, [65] * 4, max_tokens=100) == [[0, 1, 2], [3]]
