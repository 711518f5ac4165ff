"""The native decode attention (engine/builtin/fast_attention.py, decode_attention.c): where its
start-up probe passes it gives the GEMM path's bits (attend_rows) on the DecodeCache layout for
every head layout, query count, window and shared prefix the engine produces; an engine using
it generates the same tokens and logprobs to the bit as one on the GEMM path (and so the
trainer's, which tests/engine/test_model_families.py checks on every family); and without a
working compiler the engine keeps the GEMM path and says why."""

import copy
import logging
import os

import pytest
import torch

from posttrain.engine.builtin import fast_attention
from posttrain.engine.builtin.engine import BuiltinEngine
from posttrain.engine.interface import GenerationRequest, SamplingParams
from posttrain.models.loading import load_model
from posttrain.models.token_ids import chat_prompt_ids
from tests.engine.test_model_families import CONFIGS, save_tiny

# SmolLM2's heads (3 kv heads of 3 queries, 64 dims); Llama/Mistral-like 8 x 4 x 128; Qwen2-0.5B's
# 2 x 7 x 64; a group above the kernel's unrolled sizes; an odd head size (a scalar tail)
LAYOUTS = [(3, 3, 64), (8, 4, 128), (2, 7, 64), (1, 12, 64), (2, 2, 36)]


@pytest.mark.parametrize("kv, group, dim", LAYOUTS)
def test_the_kernel_gives_the_gemm_paths_bits(kv, group, dim):
    reason = fast_attention.agrees(kv, group, dim, torch.float32)
    if reason is not None:  # another BLAS or no compiler: the engine keeps the GEMM path (below)
        pytest.skip(reason)
    generator = torch.Generator().manual_seed(kv * 100 + group)
    batch, capacity = 5, 544
    k_t = torch.randn(batch, kv, dim, capacity, generator=generator)
    v = torch.randn(batch, kv, capacity, dim, generator=generator)
    shared = 200
    k_t[1:, :, :, :shared], v[1:, :, :shared] = k_t[:1, :, :, :shared], v[:1, :, :shared]
    checked = 0
    for n in (1, 4):
        for width in (12, 127, 128, 256, 257, 530):
            # a row per case: one at the full width, one shorter, one with a short draft
            ends = torch.tensor([width, max(width - 9, n), max(width - 40, n), width - 1, max(width // 2, n)])
            limit = (ends[:, None] - n + torch.arange(n)[None, :]).contiguous()
            limit[3, -1] = width + 2  # a padding query past the width (a shorter draft): clamped
            rows = torch.randn(batch * kv, group * n, dim, generator=generator)
            common = shared if int(ends.min()) - n >= shared else 0
            counts = torch.tensor([n, 1, 2, n, 3]).clamp(max=n) if n > 1 else None  # drafts of other lengths
            for window in (None, 64, 4096):
                got = fast_attention.decode_attention(
                    rows, k_t, v, limit, group, width, dim**-0.5, common, window, counts
                )
                expected = fast_attention.gemm_path(
                    rows, k_t, v, limit.clamp(max=width - 1), group, width, dim**-0.5, 0, window
                )
                if counts is not None:  # padding queries are not computed
                    real = fast_attention.real_rows(counts, kv, group, n)
                    got, expected = got[real], expected[real]
                assert torch.equal(got, expected), (n, width, window, (got - expected).abs().max())
                checked += 1
    assert checked == 36


def test_the_cache_write_puts_each_token_where_the_indexed_assignment_does():
    if fast_attention.agrees(3, 3, 64, torch.float32) is not None:
        pytest.skip("no native kernel here")
    generator = torch.Generator().manual_seed(9)
    # the step's rotated q/k heads and v, as _project leaves them: views with the tokens' stride
    stacked = torch.randn(1, 7, 15, 64, generator=generator).transpose(1, 2)
    k, v = stacked[0, 9:12], torch.randn(1, 7, 3, 64, generator=generator).transpose(1, 2)[0]
    tokens, rows, positions = torch.tensor([0, 2, 3, 6]), torch.tensor([1, 0, 0, 3]), torch.tensor([5, 40, 41, 0])
    k_t, v_cache = torch.zeros(4, 3, 64, 48), torch.zeros(4, 3, 48, 64)
    expected_k, expected_v = k_t.clone(), v_cache.clone()
    expected_k[rows, :, :, positions] = k[:, tokens].transpose(0, 1)
    expected_v[rows, :, positions] = v[:, tokens].transpose(0, 1)
    fast_attention.write_decode_cache(k, v, tokens, rows, positions, k_t, v_cache)
    assert torch.equal(k_t, expected_k) and torch.equal(v_cache, expected_v)
    with pytest.raises(ValueError, match="one length"):
        fast_attention.write_decode_cache(k, v, tokens, rows[:2], positions, k_t, v_cache)


def test_the_kernel_refuses_a_layout_it_was_not_given():
    rows = torch.randn(6, 3, 64)
    k_t, v = torch.randn(2, 3, 64, 32), torch.randn(2, 3, 32, 64)
    with pytest.raises(ValueError, match="do not match"):
        fast_attention.decode_attention(rows, k_t, v, torch.zeros(3, 1, dtype=torch.long), 3, 20, 0.125)


@pytest.fixture(scope="module")
def sliding_dir(tmp_path_factory, tokenizer):
    return save_tiny("qwen2-sliding", CONFIGS["qwen2-sliding"](), tmp_path_factory.mktemp("native-attn"), tokenizer)


def test_an_engine_on_the_kernel_matches_one_on_gemms_to_the_bit(sliding_dir, tokenizer, monkeypatch):
    """A batch sharing a system prompt (the shared prefix), sampled (n > 1: forked samples) and
    greedy, through a windowed layer: the same tokens and logprobs with the decode steps and the
    prefill chunks on the kernel, with the decode steps only, and with neither."""
    model = load_model(str(sliding_dir))
    system = {"role": "system", "content": "You are a careful assistant. Answer in one short line. " * 3}
    questions = ["What is two plus two?", "Name a colour.", "Say something about rivers.", "Hi"]
    prompts = [chat_prompt_ids(tokenizer, [system, {"role": "user", "content": q}]) for q in questions]
    requests = [
        GenerationRequest(f"g{i}", p, SamplingParams(temperature=0, max_tokens=24)) for i, p in enumerate(prompts)
    ] + [GenerationRequest("s", prompts[0], SamplingParams(temperature=1.0, max_tokens=24, n=3, seed=7))]
    calls, original = [], fast_attention.decode_attention_tokens

    def counted(*args, **kwargs):
        calls.append(1)
        return original(*args, **kwargs)

    monkeypatch.setattr(fast_attention, "decode_attention_tokens", counted)
    results = {}
    # everything on the kernel; decode steps only (prefill chunks as GEMMs); all GEMMs
    for native, prefill in ((True, True), (True, False), (False, False)):
        engine = BuiltinEngine(copy.deepcopy(model), tokenizer, num_blocks=256)
        if native and not engine.runner.native_attention:
            pytest.skip("the native decode attention does not agree with the GEMM path on this CPU")
        engine.runner.native_attention, engine.runner.native_prefill = native, prefill
        assert engine.runner.fused_rope  # the rotation and cache writes in the kernel where it is on
        before = len(calls)
        completions = engine.generate(requests)
        assert (len(calls) > before) == native
        results[native, prefill] = [(c.token_ids, c.logprobs) for c in completions]
    assert results[True, True] == results[True, False] == results[False, False]
    assert all(len(tokens) > 1 for tokens, _ in results[True, True])


def test_without_a_compiler_the_engine_keeps_the_gemm_path(tmp_path, tiny_model, tokenizer, monkeypatch, caplog):
    broken = tmp_path / "cc"
    broken.write_text("#!/bin/sh\n[ \"$1\" = --version ] && echo 'broken cc 1.0' && exit 0\necho 'no' >&2; exit 1\n")
    broken.chmod(0o755)
    monkeypatch.setenv("CC", str(broken))
    monkeypatch.setenv("POSTTRAIN_KERNEL_CACHE", str(tmp_path / "kernels"))
    fast_attention.library.cache_clear()
    fast_attention.agrees.cache_clear()
    try:
        with caplog.at_level(logging.INFO, logger="posttrain.engine.builtin.model_runner"):
            engine = BuiltinEngine(tiny_model, tokenizer, num_blocks=64)
        assert not engine.runner.native_attention
        assert "compiling decode_attention.c failed" in caplog.text
        out = engine.generate([GenerationRequest("a", [1, 2, 3] * 8, SamplingParams(temperature=0, max_tokens=4))])
        assert len(out[0].token_ids) == 4
        assert not os.listdir(tmp_path / "kernels")  # nothing half-built left behind
    finally:
        monkeypatch.undo()
        fast_attention.library.cache_clear()
        fast_attention.agrees.cache_clear()


def test_a_cache_directory_that_cannot_be_written_builds_in_a_private_one(tmp_path, monkeypatch):
    blocked = tmp_path / "a-file"
    blocked.write_text("not a directory")
    monkeypatch.setenv("POSTTRAIN_KERNEL_CACHE", str(blocked / "kernels"))
    fast_attention.library.cache_clear()
    try:
        lib = fast_attention.library()
        assert lib.vector_width() in (1, 8, 16)
        assert "posttrain-kernels-" in lib._name
    finally:
        monkeypatch.undo()
        fast_attention.library.cache_clear()


def test_the_step_rows_path_gives_the_pairs_paths_bits():
    """decode_attention_tokens reads the queries from the step's token rows and writes each real
    query's output to its own row: the same numbers as the pairs layout, nothing else touched."""
    if fast_attention.agrees(3, 3, 64, torch.float32) is not None:
        pytest.skip("no native kernel here")
    generator = torch.Generator().manual_seed(21)
    kv, group, dim, batch, n, width = 3, 3, 64, 3, 2, 140
    k_t = torch.randn(batch, kv, dim, 160, generator=generator)
    v = torch.randn(batch, kv, 160, dim, generator=generator)
    limit = torch.tensor([[138, 139], [100, 101], [60, 61]])
    counts = torch.tensor([2, 1, 2])  # the second sequence's second query pads it
    q = torch.randn(8, kv * group, dim, generator=generator)  # 8 step rows; 6 of them queries
    query_index = torch.tensor([[5, 6], [0, 0], [2, 3]])
    rows = q[query_index].view(batch, n, kv, group, dim).permute(0, 2, 3, 1, 4).reshape(batch * kv, group * n, dim)
    expected = fast_attention.decode_attention(rows.contiguous(), k_t, v, limit, group, width, 0.125, 0, None, counts)
    expected = expected.view(batch, kv, group, n, dim).permute(0, 3, 1, 2, 4).reshape(batch, n, kv * group, dim)
    out = torch.full_like(q, 7.0)
    fast_attention.decode_attention_tokens(q, query_index, k_t, v, limit, group, width, 0.125, 0, None, counts, out)
    for b, t in [(0, 0), (0, 1), (1, 0), (2, 0), (2, 1)]:
        assert torch.equal(out[query_index[b, t]], expected[b, t])
    assert (out[[1, 4, 7]] == 7.0).all()  # rows that are no query's are left as they were


def test_the_fused_rotation_writes_what_the_torch_path_writes():
    """rope_cache_write against _rotated_together and attend's indexed assignments: the queries,
    the paged cache and the DecodeCache rows, to the bit."""
    from posttrain.engine.builtin.model_runner import _rotate, _rotation

    if fast_attention.agrees(3, 3, 64, torch.float32) is not None:
        pytest.skip("no native kernel here")
    generator = torch.Generator().manual_seed(22)
    heads, kv, dim, tokens = 9, 3, 64, 4
    together = torch.randn(tokens, (heads + 2 * kv) * dim, generator=generator)
    angles = torch.rand(1, tokens, dim, generator=generator) * 300
    cos, signed_sin = _rotation(angles.cos(), angles.sin())
    slots = torch.tensor([9, 2, 30, 31])
    rows, positions = torch.tensor([1, -1, 0, 0]), torch.tensor([17, 0, 4, 5])  # token 1 is a prefill's
    k_cache, v_cache = torch.zeros(kv, 32, dim), torch.zeros(kv, 32, dim)
    k_t, v_t = torch.zeros(2, kv, dim, 24), torch.zeros(2, kv, 24, dim)
    q = fast_attention.rope_cache_write(
        together, cos[0, 0], signed_sin[0, 0], heads, slots, k_cache, v_cache, (rows, positions, k_t, v_t)
    )
    qk = _rotate(together[:, : (heads + kv) * dim].view(1, tokens, heads + kv, dim).transpose(1, 2), (cos, signed_sin))
    k, v = qk[0, heads:], together[:, (heads + kv) * dim :].view(tokens, kv, dim).transpose(0, 1)
    assert torch.equal(q, qk[0, :heads].transpose(0, 1))
    assert torch.equal(k_cache[:, slots], k) and torch.equal(v_cache[:, slots], v)
    expected_k, expected_v = torch.zeros_like(k_t), torch.zeros_like(v_t)
    cached = rows >= 0
    expected_k[rows[cached], :, :, positions[cached]] = k[:, cached].transpose(0, 1)
    expected_v[rows[cached], :, positions[cached]] = v[:, cached].transpose(0, 1)
    assert torch.equal(k_t, expected_k) and torch.equal(v_t, expected_v)
    with pytest.raises(ValueError, match="heads"):
        fast_attention.rope_cache_write(together[:, :-1], cos[0, 0], signed_sin[0, 0], heads, slots, k_cache, v_cache)
