from posttrain.engine.builtin.block_manager import BlockManager, block_hash
from posttrain.engine.builtin.sequence import Sequence
from posttrain.engine.interface import SamplingParams


def seq(tokens, seq_id=0, block_size=4):
    return Sequence(seq_id, "r", 0, tokens, SamplingParams(), block_size, arrival=seq_id)


def test_allocation_shares_computed_prefix_blocks_only():
    blocks = BlockManager(num_blocks=10, block_size=4)
    a = seq(list(range(10)))  # blocks [0..3] [4..7] [8,9]
    blocks.allocate(a, blocks.prefix_hashes(a))
    assert len(a.block_table) == 3 and a.num_computed_tokens == 0
    b = seq(list(range(10)), seq_id=1)
    blocks.allocate(b, blocks.prefix_hashes(b))
    assert b.num_computed_tokens == 0  # a's blocks are not computed yet: nothing to share
    blocks.free_sequence(b)
    a.num_computed_tokens = 10
    blocks.register_computed(a)
    c = seq(list(range(10)) + [99], seq_id=2)
    blocks.allocate(c, blocks.prefix_hashes(c))
    assert c.num_computed_tokens == 8 and c.block_table[:2] == a.block_table[:2]
    assert blocks.blocks[a.block_table[0]].ref_count == 2


def test_the_block_holding_the_last_prompt_token_is_never_shared():
    blocks = BlockManager(num_blocks=10, block_size=4)
    a = seq(list(range(8)))
    assert len(blocks.prefix_hashes(a)) == 1  # block 2 holds the last token: always computed


def test_freed_blocks_stay_cached_until_evicted_lru():
    blocks = BlockManager(num_blocks=4, block_size=2)
    a = seq([1, 2, 3, 4, 5], block_size=2)
    blocks.allocate(a, blocks.prefix_hashes(a))
    a.num_computed_tokens = 5
    blocks.register_computed(a)
    blocks.free_sequence(a)
    assert blocks.num_free == 4 and len(blocks.cached) == 2
    b = seq([1, 2, 3, 4, 9], seq_id=1, block_size=2)
    blocks.allocate(b, blocks.prefix_hashes(b))
    assert b.num_computed_tokens == 4  # taken back from the free list
    blocks.free_sequence(b)
    c = seq([7, 7, 7, 7, 7, 7, 7], seq_id=2, block_size=2)  # needs all 4 blocks: evicts the cached ones
    blocks.allocate(c, blocks.prefix_hashes(c))
    assert not blocks.cached


def test_hash_collision_is_caught_by_token_comparison():
    blocks = BlockManager(num_blocks=6, block_size=2)
    a = seq([1, 2, 3], block_size=2)
    blocks.allocate(a, blocks.prefix_hashes(a))
    a.num_computed_tokens = 3
    blocks.register_computed(a)
    forged = seq([5, 6, 7], seq_id=1, block_size=2)
    hashes = blocks.prefix_hashes(a)  # pretend [5, 6] hashed like [1, 2]
    blocks.allocate(forged, hashes)
    assert forged.num_computed_tokens == 0


def test_invalidate_drops_the_prefix_cache():
    blocks = BlockManager(num_blocks=6, block_size=2)
    a = seq([1, 2, 3], block_size=2)
    blocks.allocate(a, blocks.prefix_hashes(a))
    a.num_computed_tokens = 3
    blocks.register_computed(a)
    blocks.free_sequence(a)
    blocks.invalidate_prefix_cache()
    b = seq([1, 2, 3], seq_id=1, block_size=2)
    blocks.allocate(b, blocks.prefix_hashes(b))
    assert b.num_computed_tokens == 0
    assert block_hash(None, [1, 2]) != block_hash(block_hash(None, [0]), [1, 2])
