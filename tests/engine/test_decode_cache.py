"""The DecodeCache's bookkeeping on its own: rows loaded from a paged cache, kept, evicted and
compacted, and declined past its memory budget."""

import torch

from posttrain.engine.builtin.decode_cache import DecodeCache

LAYERS, KV, DIM, BLOCK, BLOCKS = 2, 3, 4, 4, 32


def paged():
    torch.manual_seed(0)
    shape = (LAYERS, KV, BLOCKS * BLOCK, DIM)
    return torch.randn(shape), torch.randn(shape)


def expected_row(cache, table, length):
    slots = torch.tensor([table[p // BLOCK] * BLOCK + p % BLOCK for p in range(length)])
    return cache[:, :, slots]  # [layers, kv, length, dim]


def check(decode_cache, k_cache, v_cache, placed, decode, written_by_forward):
    for (seq_id, table, context, _), row in zip(decode, placed):
        assert decode_cache.seq_ids[row] == seq_id
        loaded = context - 1 - written_by_forward.get(seq_id, 0)
        keys = decode_cache.k_t[:, row, :, :, :loaded].transpose(-1, -2)
        assert torch.equal(keys, expected_row(k_cache, table, loaded))
        assert torch.equal(decode_cache.v[:, row, :, :loaded], expected_row(v_cache, table, loaded))


def test_rows_load_evict_compact_and_stay_in_step():
    k_cache, v_cache = paged()
    cache = DecodeCache(LAYERS, KV, DIM, torch.float32, BLOCK, max_bytes=1 << 30)
    tables = {0: [5, 2, 9], 1: [7, 1], 2: [3, 11, 4, 6], 3: [8]}
    step1 = [(0, tables[0], 10, 12), (1, tables[1], 6, 8), (2, tables[2], 14, 16), (3, tables[3], 3, 4)]
    placed = cache.prepare(step1, k_cache, v_cache)
    assert sorted(placed) == [0, 1, 2, 3]
    check(cache, k_cache, v_cache, placed, step1, {})
    # 0 and 3 left the batch, 1 and 2 go on (one token further), 4 joins
    tables[4] = [12, 13]
    step2 = [(2, tables[2], 15, 16), (4, tables[4], 7, 8), (1, tables[1], 7, 8)]
    placed = cache.prepare(step2, k_cache, v_cache)
    assert sorted(placed) == [0, 1, 2] and len(cache.seq_ids) == 3  # compact
    # the kept rows were not reloaded: their last position is the forward pass's to write
    check(cache, k_cache, v_cache, placed, step2, {1: 1, 2: 1})
    assert cache.lengths == [dict(((s, c) for s, _, c, _ in step2))[s] for s in cache.seq_ids]


def test_several_rows_move_down_into_several_holes():
    k_cache, v_cache = paged()
    cache = DecodeCache(LAYERS, KV, DIM, torch.float32, BLOCK, max_bytes=1 << 30)
    tables = {0: [1], 1: [2, 3], 2: [4, 5, 6], 3: [7, 8, 9, 10], 4: [11, 12, 13]}
    lengths = {0: 3, 1: 6, 2: 10, 3: 15, 4: 9}
    cache.prepare([(s, tables[s], lengths[s], 16) for s in range(5)], k_cache, v_cache)
    # 0 and 1 left: rows 3 and 4 move into rows 0 and 1, each copied up to its own length
    step = [(s, tables[s], lengths[s] + 1, 16) for s in (2, 3, 4)]
    placed = cache.prepare(step, k_cache, v_cache)
    assert sorted(placed) == [0, 1, 2] and sorted(cache.seq_ids) == [2, 3, 4]
    check(cache, k_cache, v_cache, placed, step, {2: 1, 3: 1, 4: 1})


def test_a_row_out_of_step_with_its_sequence_is_reloaded():
    k_cache, v_cache = paged()
    cache = DecodeCache(LAYERS, KV, DIM, torch.float32, BLOCK, max_bytes=1 << 30)
    cache.prepare([(0, [1, 2, 3], 9, 12)], k_cache, v_cache)
    cache.k_t.fill_(7.0)  # garbage: a stale row must not be trusted
    # the sequence is back with a different length (it was preempted and recomputed)
    placed = cache.prepare([(0, [4, 5, 6], 11, 12)], k_cache, v_cache)
    check(cache, k_cache, v_cache, placed, [(0, [4, 5, 6], 11, 12)], {})


def test_past_its_budget_it_declines_and_holds_nothing():
    k_cache, v_cache = paged()
    probe = DecodeCache(LAYERS, KV, DIM, torch.float32, BLOCK, max_bytes=0)
    cache = DecodeCache(LAYERS, KV, DIM, torch.float32, BLOCK, max_bytes=probe.bytes_for(2, 8))
    # the final length (40) does not fit, the current one (8) does
    assert cache.prepare([(0, [1, 2], 8, 40), (1, [3, 4], 8, 40)], k_cache, v_cache) is not None
    assert cache.v.shape[3] == 8
    assert cache.prepare([(0, [1, 2, 5], 9, 40), (1, [3, 4, 6], 9, 40)], k_cache, v_cache) is None
    assert cache.seq_ids == [] and cache.steps_declined == 1 and cache.steps_served == 1


def test_it_grows_by_doubling_keeps_its_rows_and_counts_each_growth():
    k_cache, v_cache = paged()
    cache = DecodeCache(LAYERS, KV, DIM, torch.float32, BLOCK, max_bytes=1 << 30)
    tables = {0: [5, 2, 9], 1: [7, 1], 2: [3, 11, 4]}
    step1 = [(0, tables[0], 9, 10)]
    cache.prepare(step1, k_cache, v_cache)
    assert (cache.v.shape[1], cache.v.shape[3], cache.growths) == (1, 12, 1)
    step2 = [(0, tables[0], 10, 10), (1, tables[1], 6, 8)]
    cache.prepare(step2, k_cache, v_cache)
    assert (cache.v.shape[1], cache.v.shape[3], cache.growths) == (2, 12, 2)
    # a third row doubles the rows to 4; a longer sequence doubles the capacity to 24
    step3 = [(0, tables[0], 11, 12), (1, tables[1], 7, 8), (2, tables[2], 10, 13)]
    placed = cache.prepare(step3, k_cache, v_cache)
    assert (cache.v.shape[1], cache.v.shape[3], cache.growths) == (4, 24, 3)
    check(cache, k_cache, v_cache, placed, step3, {0: 2, 1: 1})  # rows copied across the growth
    cache.prepare([(0, tables[0], 12, 12), (2, tables[2], 11, 13)], k_cache, v_cache)
    assert cache.growths == 3


def test_reserve_allocates_up_front_or_nothing_past_the_budget():
    k_cache, v_cache = paged()
    probe = DecodeCache(LAYERS, KV, DIM, torch.float32, BLOCK, max_bytes=0)
    cache = DecodeCache(LAYERS, KV, DIM, torch.float32, BLOCK, max_bytes=probe.bytes_for(4, 32))
    assert not cache.reserve(8, 32) and cache.v is None and cache.growths == 0
    assert cache.reserve(4, 30)
    assert (cache.v.shape[1], cache.v.shape[3], cache.growths) == (4, 32, 1)
    decode = [(0, [5, 2, 9], 10, 30), (1, [7, 1], 6, 20), (2, [3], 3, 25)]
    placed = cache.prepare(decode, k_cache, v_cache)
    check(cache, k_cache, v_cache, placed, decode, {})
    assert cache.growths == 1  # steps within the reservation allocate nothing
