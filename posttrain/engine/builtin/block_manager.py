"""Paged KV blocks with prefix caching.

A full block is identified by hash(parent block's hash, its token ids): two sequences whose
prompts start the same share those blocks (reference counts). A block enters the cache only
once its KV is computed. Freed blocks keep their content and hash and sit in an LRU free list:
a later sequence with the same prefix takes them back; allocation evicts the least recently
freed. Token ids are compared on every hit, so a hash collision can never serve wrong KV.
"""

from __future__ import annotations

import hashlib
from collections import OrderedDict

from posttrain.engine.builtin.sequence import Sequence


class Block:
    __slots__ = ("block_id", "ref_count", "hash", "token_ids")

    def __init__(self, block_id: int) -> None:
        self.block_id = block_id
        self.ref_count = 0
        self.hash: bytes | None = None
        self.token_ids: tuple[int, ...] = ()


def block_hash(parent: bytes | None, token_ids: list[int]) -> bytes:
    h = hashlib.blake2b(digest_size=16)
    if parent is not None:
        h.update(parent)
    h.update(b",".join(str(t).encode() for t in token_ids))
    return h.digest()


class BlockManager:
    def __init__(self, num_blocks: int, block_size: int) -> None:
        self.block_size = block_size
        self.blocks = [Block(i) for i in range(num_blocks)]
        self.free: OrderedDict[int, None] = OrderedDict((i, None) for i in range(num_blocks))  # LRU order
        self.cached: dict[bytes, int] = {}  # hash -> block id (computed blocks only)
        self.hits = 0  # prompt tokens served from the cache
        self.lookups = 0  # prompt tokens looked up

    @property
    def num_free(self) -> int:
        return len(self.free)

    def _take_free(self) -> Block:
        block_id, _ = self.free.popitem(last=False)
        block = self.blocks[block_id]
        if block.hash is not None and self.cached.get(block.hash) == block_id:
            del self.cached[block.hash]  # evicted
        block.hash, block.token_ids, block.ref_count = None, (), 1
        return block

    def _hit(self, hash_: bytes, token_ids: list[int]) -> Block | None:
        block_id = self.cached.get(hash_)
        if block_id is None:
            return None
        block = self.blocks[block_id]
        if block.token_ids != tuple(token_ids):  # hash collision
            return None
        if block.ref_count == 0:
            del self.free[block_id]
        block.ref_count += 1
        return block

    def prefix_hashes(self, seq: Sequence) -> list[bytes]:
        """Hashes of the sequence's full blocks that may be shared: every full block before
        the one holding its last token (that one is always computed, to get its logits)."""
        hashes, parent = [], None
        for index in range((len(seq) - 1) // self.block_size):
            parent = block_hash(parent, seq.block_tokens(index))
            hashes.append(parent)
        return hashes

    def can_allocate(self, seq: Sequence, hashes: list[bytes]) -> bool:
        reusable = sum(1 for h in hashes if h in self.cached and self.blocks[self.cached[h]].ref_count == 0)
        fresh = sum(1 for h in hashes if h not in self.cached)
        needed = fresh + seq.blocks_needed(len(seq)) - len(hashes)
        return needed <= self.num_free - reusable

    def allocate(self, seq: Sequence, hashes: list[bytes]) -> None:
        """Blocks for all of the sequence's current tokens; leading cached blocks are shared."""
        assert not seq.block_table
        sharing = True
        for index, hash_ in enumerate(hashes):
            block = self._hit(hash_, seq.block_tokens(index)) if sharing else None
            if block is None:
                sharing = False
                block = self._take_free()
            else:
                seq.num_computed_tokens += self.block_size
            seq.block_table.append(block.block_id)
        seq.num_cached_prompt_tokens = seq.num_computed_tokens
        if seq.preemptions == 0:  # a recomputation after preemption is not a prompt lookup
            self.hits += seq.num_computed_tokens
            self.lookups += seq.num_prompt_tokens
        while len(seq.block_table) < seq.blocks_needed(len(seq)):
            seq.block_table.append(self._take_free().block_id)

    def can_append(self, seq: Sequence, new_tokens: int = 1) -> bool:
        return seq.blocks_needed(len(seq) + new_tokens) - len(seq.block_table) <= self.num_free

    def ensure_slots(self, seq: Sequence, num_tokens: int) -> None:
        while len(seq.block_table) < seq.blocks_needed(num_tokens):
            seq.block_table.append(self._take_free().block_id)

    def register_computed(self, seq: Sequence) -> None:
        """Put the sequence's newly computed full blocks into the prefix cache."""
        parent = None
        for index in range(seq.num_computed_tokens // self.block_size):
            block = self.blocks[seq.block_table[index]]
            if block.hash is None:
                tokens = seq.block_tokens(index)
                block.hash = block_hash(parent, tokens)
                block.token_ids = tuple(tokens)
                self.cached.setdefault(block.hash, block.block_id)
            parent = block.hash

    def fork(self, parent: Sequence, child: Sequence) -> tuple[int, int] | None:
        """Give `child` the parent's computed prompt: its full blocks are shared (reference
        counts), its partial last block, which the parent goes on writing, is copied. Returns
        (source, destination) of the block whose KV the caller must copy, or None."""
        assert not child.block_table
        computed = parent.num_computed_tokens
        full = computed // self.block_size
        shared = parent.block_table[:full]
        for block_id in shared:
            self.blocks[block_id].ref_count += 1
        child.block_table = list(shared)
        copy = None
        if computed % self.block_size:
            block = self._take_free()
            copy = (parent.block_table[full], block.block_id)
            child.block_table.append(block.block_id)
        child.num_computed_tokens = computed
        child.num_cached_prompt_tokens = computed
        self.hits += computed
        self.lookups += child.num_prompt_tokens
        return copy

    def free_sequence(self, seq: Sequence) -> None:
        for block_id in reversed(seq.block_table):  # the tail first: prefixes stay cached longest
            block = self.blocks[block_id]
            block.ref_count -= 1
            if block.ref_count == 0:
                self.free[block_id] = None
        seq.block_table = []
        seq.num_computed_tokens = 0

    def invalidate_prefix_cache(self) -> None:
        """After a weight update every cached KV is stale."""
        self.cached.clear()
        for block in self.blocks:
            if block.ref_count == 0:
                block.hash, block.token_ids = None, ()

    @property
    def hit_rate(self) -> float:
        return self.hits / self.lookups if self.lookups else 0.0
