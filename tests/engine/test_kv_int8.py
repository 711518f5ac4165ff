"""The int8 KV cache ([engine] kv_cache_dtype = "int8") on the real builtin engine and the tiny
random Llama: its bytes, what fits, how close it stays to the fp32 cache, every engine path
that reads the cache, and the bad inputs."""

import copy

import pytest
import torch

from posttrain.config import AlgorithmConfig, EngineConfig, OptimConfig
from posttrain.engine.builtin import fast_attention, kv_quant
from posttrain.engine.builtin.engine import BuiltinEngine
from posttrain.engine.builtin.engine_kernels import use_engine_kernels
from posttrain.engine.interface import GenerationRequest, SamplingParams
from posttrain.errors import PosttrainError
from posttrain.evaluate.kv_cache_agreement import compare
from posttrain.train.trainer import PolicyTrainer, TrainSample


def prompts(count=4, lengths=(9, 40, 130, 300), seed=1):
    generator = torch.Generator().manual_seed(seed)
    return [torch.randint(3, 500, (n,), generator=generator).tolist() for n in lengths[:count]]


def engine(model, tokenizer, kv_cache_dtype="int8", **kwargs):
    return BuiltinEngine(copy.deepcopy(model), tokenizer, kv_cache_dtype=kv_cache_dtype, **kwargs)


def greedy(eng, prompt_list, max_tokens=24):
    requests = [GenerationRequest(f"r{i}", p, SamplingParams(temperature=0, max_tokens=max_tokens))
                for i, p in enumerate(prompt_list)]  # fmt: skip
    return eng.generate(requests)


def test_quantize_round_trip_is_within_half_a_step():
    x = torch.randn(3, 7, 64) * torch.tensor([0.01, 1.0, 30.0])[:, None, None]
    q, scale = kv_quant.quantize(x)
    assert q.dtype == torch.int8 and scale.shape == (3, 7)
    assert ((kv_quant.dequantize(q, scale) - x).abs() <= scale[..., None] / 2 + 1e-7).all()
    zeros_q, zeros_scale = kv_quant.quantize(torch.zeros(2, 64))
    assert (zeros_q == 0).all() and (zeros_scale > 0).all()  # a positive scale: never 0 * -inf


def test_int8_cache_bytes_per_token(tiny_model, tokenizer):
    fp32, int8 = engine(tiny_model, tokenizer, "fp32", num_blocks=32), engine(tiny_model, tokenizer, num_blocks=32)
    layers, kv, dim = 2, 2, 16
    assert fp32.runner.kv_bytes_per_token == 2 * layers * kv * dim * 4
    assert int8.runner.kv_bytes_per_token == 2 * layers * kv * (dim + 4)  # a quarter, plus a float32 scale
    runner = int8.runner
    allocated = sum(t.numel() * t.element_size() for t in (runner.k_cache, runner.v_cache, *runner.scales))
    assert allocated == runner.kv_bytes_per_token * runner.k_cache.shape[2]
    assert runner.k_cache.dtype == torch.int8
    # SmolLM2's head_dim of 64: 0.27 of the fp32 bytes
    assert kv_quant.bytes_per_token("int8", 30, 3, 64) / kv_quant.bytes_per_token("fp32", 30, 3, 64) == 68 / 256


def test_twice_the_sequences_fit_in_the_same_memory(tiny_model, tokenizer):
    """The fp32 cache's bytes of 24 blocks, given to the int8 cache as blocks: at least 1.9x the
    sequences run at once, none preempted."""
    block, length = 16, 64  # each sequence: a 40-token prompt and 24 new tokens, 4 blocks
    fp32 = engine(tiny_model, tokenizer, "fp32", num_blocks=24, block_size=block)
    budget = fp32.runner.kv_bytes_per_token * 24 * block
    blocks = budget // (engine(tiny_model, tokenizer, num_blocks=4).runner.kv_bytes_per_token * block)
    fits = {"fp32": 24 // (length // block), "int8": blocks // (length // block)}
    assert fits["int8"] >= 1.9 * fits["fp32"]
    int8 = engine(tiny_model, tokenizer, num_blocks=blocks, block_size=block, max_num_seqs=fits["int8"])
    completions = greedy(int8, prompts(fits["int8"], [40] * fits["int8"], seed=2), max_tokens=24)
    assert all(len(c.token_ids) == 24 for c in completions)
    assert int8.stats.preemptions == 0


def test_greedy_tokens_and_logprobs_stay_close_to_fp32(tiny_model, tokenizer):
    fp32, int8 = engine(tiny_model, tokenizer, "fp32", num_blocks=96), engine(tiny_model, tokenizer, num_blocks=96)
    report = compare(fp32, int8, prompts(), max_tokens=24)
    assert report["greedy_agreement"] >= 0.9, report
    assert 0 < report["kl_mean"] < 1e-4 and report["kl_max"] < 1e-3, report
    for a, b in zip(greedy(fp32, prompts()), greedy(int8, prompts())):
        common = next((i for i, (x, y) in enumerate(zip(a.token_ids, b.token_ids)) if x != y), len(a.token_ids))
        gap = max(abs(x - y) for x, y in zip(a.logprobs[: common + 1], b.logprobs[: common + 1]))
        assert gap < 0.05  # not the trainer's bits: logprob_mismatch_max shows it, tis_cap corrects it


def test_trainer_reports_the_mismatch_and_tis_reweights_it(tiny_model, tokenizer):
    """RL on int8 rollouts: the trainer recomputes exact logprobs, so logprob_mismatch_max is
    above 0 (the fp32 cache's is 0 where the kernels allow it: nothing here asks for it) and
    small; truncated importance sampling weights the tokens by exp(trainer - engine), capped."""
    prompt = prompts(1, [60])[0]
    sampled = engine(tiny_model, tokenizer, num_blocks=96).generate(
        [GenerationRequest("p", prompt, SamplingParams(n=4, temperature=0.9, max_tokens=12, seed=1))]
    )
    advantages = (-1.5, -0.5, 0.5, 1.5)
    samples = [TrainSample(prompt, c.token_ids, c.logprobs, advantages[i]) for i, c in enumerate(sampled)]
    trainer = PolicyTrainer(
        use_engine_kernels(copy.deepcopy(tiny_model)),
        OptimConfig(lr=1e-3),
        AlgorithmConfig(tis_cap=2.0),
        0.9,
        tokenizer.pad_token_id,
    )
    stats = trainer.step(samples)
    assert 0 < stats["logprob_mismatch_max"] < 0.05, stats
    assert stats["tis_weight_mean"] != 1.0 and 0.9 < stats["tis_weight_mean"] <= 2.0, stats
    assert torch.isfinite(torch.tensor(stats["loss"])) and stats["grad_norm"] > 0


def test_every_attention_path_reads_the_same_int8_cache(tiny_model, tokenizer):
    """The decode kernel (scales applied as it reads), the torch path over the same rows
    dequantized, the gather from the paged cache, chunked prefill and prefix hits: the same
    greedy tokens, logprobs within float rounding."""
    base = greedy(engine(tiny_model, tokenizer, num_blocks=96), prompts())
    gemm = engine(tiny_model, tokenizer, num_blocks=96)
    gemm.runner.native_attention = False
    variants = {
        "gemm": gemm,
        "gather": engine(tiny_model, tokenizer, num_blocks=96, decode_cache_bytes=0),
        "chunked": engine(tiny_model, tokenizer, num_blocks=96, max_num_batched_tokens=48),
    }
    assert variants["chunked"].runner.native_attention  # the kernel path ran in `base`
    for name, eng in variants.items():
        for a, b in zip(base, greedy(eng, prompts())):
            assert a.token_ids == b.token_ids, name
            assert max(abs(x - y) for x, y in zip(a.logprobs, b.logprobs)) < 1e-4, name
    cached = engine(tiny_model, tokenizer, num_blocks=96)
    shared = prompts(1, [300])[0]
    first = greedy(cached, [shared])[0]
    again = greedy(cached, [shared])[0]
    assert cached.blocks.hits > 0 and again.token_ids == first.token_ids


def test_speculative_decoding_runs_on_the_int8_cache(tiny_model, tokenizer):
    repetitive = [[5, 6, 7, 8, 9] * 30]  # n-gram drafts find matches
    plain = greedy(engine(tiny_model, tokenizer, num_blocks=96), repetitive, max_tokens=40)
    spec_engine = engine(tiny_model, tokenizer, num_blocks=96, speculative=True)
    spec = greedy(spec_engine, repetitive, max_tokens=40)
    assert spec[0].token_ids == plain[0].token_ids
    assert max(abs(x - y) for x, y in zip(spec[0].logprobs, plain[0].logprobs)) < 1e-4


def test_kernel_reads_int8_with_scales_like_dequantized_fp32():
    generator = torch.Generator().manual_seed(3)
    batch, kv, group, dim, capacity, width, n = 3, 2, 3, 64, 160, 150, 2
    k_t = torch.randn(batch, kv, dim, capacity, generator=generator) * 3
    v = torch.randn(batch, kv, capacity, dim, generator=generator)
    k8, k_scale = kv_quant.quantize(k_t.transpose(-1, -2))
    v8, v_scale = kv_quant.quantize(v)
    k8_t = k8.transpose(-1, -2).contiguous()
    q = torch.randn(batch * n, kv * group, dim, generator=generator)
    limit = torch.tensor([[width - 2, width - 1], [90, 91], [40, 41]])
    index = torch.arange(batch * n).view(batch, n)
    got = torch.zeros_like(q)
    fast_attention.decode_attention_tokens(
        q, index, k8_t, v8, limit, group, width, 0.125, 0, None, None, got, (k_scale, v_scale)
    )
    expected = torch.zeros_like(q)
    k_deq = kv_quant.dequantize(k8, k_scale).transpose(-1, -2).contiguous()
    fast_attention.decode_attention_tokens(
        q, index, k_deq, kv_quant.dequantize(v8, v_scale), limit, group, width, 0.125, 0, None, None, expected
    )
    assert torch.allclose(got, expected, atol=1e-5, rtol=1e-5)
    with pytest.raises(ValueError, match="int8"):
        fast_attention.decode_attention_tokens(q, index, k8_t, v8, limit, group, width, 0.125, 0, None, None, got)


def test_bad_input_is_one_line_naming_the_key(tiny_model, tokenizer):
    with pytest.raises(PosttrainError, match=r"\[engine\] kv_cache_dtype = 'int4' is not one of"):
        engine(tiny_model, tokenizer, "int4", num_blocks=8)
    with pytest.raises(PosttrainError, match=r"kv_cache_dtype = 'int8' does not run with the compiled step"):
        engine(tiny_model, tokenizer, num_blocks=8, compile_step=True)
    with pytest.raises(ValueError, match="kv_cache_dtype"):
        EngineConfig(kv_cache_dtype="int4")
    with pytest.raises(ValueError, match="kv_cache_dtype = 'int8' needs backend = 'builtin'"):
        EngineConfig(kv_cache_dtype="int8", backend="hf")


def test_native_quantized_write_is_kv_quant_to_the_bit():
    generator = torch.Generator().manual_seed(5)
    kv, tokens, dim, slots, capacity = 2, 5, 64, 12, 64  # capacity == dim: keys told apart by the flag
    x = torch.randn(kv, tokens, dim, generator=generator) * torch.tensor([1e-3, 1.0, 50.0, 0.0, 2.0])[None, :, None]
    slot_of = torch.tensor([3, 0, 7, 11, 5])
    rows, positions = torch.tensor([-1, 0, 1, -1, 1]), torch.tensor([0, 4, 9, 0, 63])
    expected_q, expected_scale = kv_quant.quantize(x)
    for keys in (True, False):
        cache, scales = torch.zeros(kv, slots, dim, dtype=torch.int8), torch.zeros(kv, slots)
        row_cache = torch.zeros(2, kv, dim, capacity, dtype=torch.int8)  # [rows, kv, D, capacity] or [.., capacity, D]
        row_scales = torch.zeros(2, kv, capacity)
        destination = (rows, positions, row_cache, row_scales, keys)
        fast_attention.quantize_write(x, slot_of, cache, scales, destination)
        assert torch.equal(cache[:, slot_of], expected_q) and torch.equal(scales[:, slot_of], expected_scale)
        written = rows >= 0
        got_rows = row_cache.transpose(-1, -2) if keys else row_cache
        got = got_rows[rows[written], :, positions[written]]  # [written tokens, kv, D]
        assert torch.equal(got, expected_q[:, written].transpose(0, 1))
        assert torch.equal(row_scales[rows[written], :, positions[written]], expected_scale[:, written].T)


def test_the_config_key_reaches_the_engine_a_run_builds(tiny_model, tokenizer):
    """[engine] kv_cache_dtype: the engine rollouts run on (the driver's, or each replica's:
    both come from engine_for_model) keeps the cache it names."""
    from posttrain.engine.factory import engine_for_model

    built = engine_for_model(EngineConfig(kv_cache_dtype="int8", num_blocks=8), copy.deepcopy(tiny_model), tokenizer)
    assert built.runner.quantized and built.runner.k_cache.dtype == torch.int8
    default = engine_for_model(EngineConfig(num_blocks=8), copy.deepcopy(tiny_model), tokenizer)
    assert not default.runner.quantized and default.runner.k_cache.dtype == torch.float32
