"""The builtin engine against `transformers` on the real SmolLM2: greedy output token for token,
with chunked prefill, prefix hits and preemption forced by small budgets."""

import copy

import pytest
import torch

from posttrain.engine.builtin.engine import BuiltinEngine
from posttrain.engine.builtin.engine_kernels import use_engine_kernels
from posttrain.engine.interface import GenerationRequest, SamplingParams
from posttrain.models.token_ids import chat_prompt_ids
from tests.conftest import assert_logprobs_match, expects_bit_equality

QUESTIONS = [
    "What is 17 + 25?",
    "Name three primary colors.",
    "Write a haiku about the sea.",
    "Explain photosynthesis in one sentence.",
    "What is the capital of Japan?",
    "Count from one to ten.",
    "Translate 'good morning' into French.",
    "Give me a synonym for happy.",
    "What does CPU stand for?",
    "Is a tomato a fruit or a vegetable?",
    "List two uses of copper.",
    "How many legs does a spider have?",
    "Why is the sky blue?",
    "Suggest a name for a cat.",
    "What is 9 times 8?",
    "Define the word 'entropy'.",
    "Summarize the plot of Cinderella " + "in great detail, " * 12,
    "Describe a sunrise " + "over the mountains, " * 20,
    "Tell me a joke about programmers.",
    "What is the boiling point of water in Celsius?",
    "Continue the list: apple, banana, cherry,",
    "What is the opposite of 'ancient'?",
]


@pytest.fixture(scope="module")
def smollm():
    from posttrain.models.loading import load_model, load_tokenizer

    return load_model("smollm2-135m"), load_tokenizer("smollm2-135m")


def chat_ids(tokenizer, text):
    return chat_prompt_ids(tokenizer, [{"role": "user", "content": text}])


def hf_greedy(model, prompt, max_new):
    with torch.no_grad():
        out = model.generate(
            torch.tensor([prompt]), max_new_tokens=max_new, do_sample=False, pad_token_id=2, eos_token_id=2
        )
    tokens = out[0, len(prompt) :].tolist()
    return tokens[: tokens.index(2) + 1] if 2 in tokens else tokens


@pytest.fixture(scope="module")
def expected_greedy(smollm):
    """transformers' greedy continuations, computed once for all engine configurations."""
    model, tokenizer = smollm
    prompts = [chat_ids(tokenizer, q) for q in QUESTIONS]
    expected = [hf_greedy(model, p, 24) for p in prompts]
    # two repeats, which the engine serves from its prefix cache: transformers' answer is the same
    return prompts + [prompts[0], prompts[16]], expected + [expected[0], expected[16]]


@pytest.mark.slow
@pytest.mark.parametrize(
    "budget, num_blocks", [(2048, 2048), (48, 2048), (2048, 40)], ids=["plain", "chunked-prefill", "preemption"]
)
def test_greedy_matches_transformers_token_for_token(smollm, expected_greedy, budget, num_blocks):
    model, tokenizer = smollm
    # the last two prompts repeat earlier ones: they hit the prefix cache
    prompts, expected = expected_greedy
    engine = BuiltinEngine(
        copy.deepcopy(model), tokenizer, num_blocks=num_blocks, block_size=16, max_num_batched_tokens=budget
    )
    out = engine.generate(
        [GenerationRequest(str(i), p, SamplingParams(temperature=0.0, max_tokens=24)) for i, p in enumerate(prompts)]
    )
    mismatches = [i for i, (c, e) in enumerate(zip(out, expected)) if c.token_ids != e]
    assert not mismatches, [(QUESTIONS[i % len(QUESTIONS)], out[i].text, expected[i]) for i in mismatches]
    assert engine.stats.cached_prompt_tokens > 0
    if num_blocks == 40:
        assert engine.stats.preemptions > 0
    if budget == 48:
        assert max(len(p) for p in prompts) > 48  # some prompt was split into chunks


@pytest.mark.slow
def test_group_samples_share_the_prompt_and_logprobs_match_a_full_forward(smollm):
    from posttrain.train.logprobs import pad_right, token_logprobs

    model, tokenizer = smollm
    engine = BuiltinEngine(copy.deepcopy(model), tokenizer)
    prompts = [chat_ids(tokenizer, q) for q in QUESTIONS[:4]]
    params = SamplingParams(n=8, temperature=0.7, max_tokens=16, seed=3)
    out = engine.generate([GenerationRequest(str(i), p, params) for i, p in enumerate(prompts)])
    assert len(out) == 32
    # 7 of every 8 samples are forked from the first: their whole prompt is served from cache (and
    # the first samples share the chat template's system prompt with each other)
    assert engine.stats.prefix_hit_rate >= 7 / 8
    # the trainer's side: the same model on the engine's attention function, one padded batch
    trainer = use_engine_kernels(copy.deepcopy(model))
    ids, mask = pad_right([c.prompt_token_ids + c.token_ids for c in out], tokenizer.pad_token_id)
    with torch.no_grad():
        recomputed, _ = token_logprobs(trainer, ids, mask, temperature=0.7)
    bit_equal = expects_bit_equality(model)
    for row, c in enumerate(out):
        start = len(c.prompt_token_ids) - 1
        # zero mismatch: equal to the bit, not within a tolerance (where this CPU's kernels allow it)
        assert_logprobs_match(recomputed[row, start : start + len(c.token_ids)], c.logprobs, bit_equal, row)
    again = engine.generate([GenerationRequest(str(i), p, params) for i, p in enumerate(prompts)])
    assert [c.token_ids for c in again] == [c.token_ids for c in out]  # seeded


def test_tiny_engine_versions_abort_and_weight_updates(tiny_model, tokenizer):
    engine = BuiltinEngine(copy.deepcopy(tiny_model), tokenizer, num_blocks=64)
    prompt = chat_ids(tokenizer, "hello")
    first = engine.generate([GenerationRequest("a", prompt, SamplingParams(temperature=0.0, max_tokens=5))])[0]
    assert first.version == 0 and first.token_versions == [0] * len(first.token_ids)
    new = {n: p.detach() + 0.5 * torch.randn_like(p) for n, p in tiny_model.named_parameters()}
    engine.update_weights(new.items(), version=4)
    assert not engine.blocks.cached  # stale KV cannot be served after an update
    second = engine.generate([GenerationRequest("a", prompt, SamplingParams(temperature=0.0, max_tokens=5))])[0]
    assert second.version == 4 and second.logprobs != first.logprobs
    seqs = engine.add_requests([GenerationRequest("x", prompt, SamplingParams(temperature=1.0, max_tokens=50))])
    engine.step()
    engine.step()
    engine.abort(["x"])
    assert seqs[0].finish_reason == "abort" and not engine.scheduler.has_work()
    assert engine.blocks.num_free == 64


def test_stop_strings_and_max_tokens(tiny_model, tokenizer):
    engine = BuiltinEngine(copy.deepcopy(tiny_model), tokenizer, num_blocks=64)
    prompt = chat_ids(tokenizer, "hello")
    free = engine.generate([GenerationRequest("a", prompt, SamplingParams(temperature=0.0, max_tokens=8))])[0]
    assert free.finish_reason in ("length", "stop") and len(free.token_ids) <= 8
    stop = free.text[2:5]
    if stop.strip():
        cut = engine.generate(
            [GenerationRequest("a", prompt, SamplingParams(temperature=0.0, max_tokens=8, stop=(stop,)))]
        )[0]
        assert cut.finish_reason == "stop" and stop not in cut.text


def test_forked_samples_copy_the_partial_block_and_match_a_full_forward(tiny_model, tokenizer):
    from posttrain.train.logprobs import pad_right, token_logprobs

    engine = BuiltinEngine(copy.deepcopy(tiny_model), tokenizer, num_blocks=64, block_size=4)
    prompt = chat_ids(tokenizer, "fork me")
    assert len(prompt) % 4 != 0  # the last prompt block is partial: it must be copied, not shared
    params = SamplingParams(n=4, temperature=1.0, max_tokens=12, seed=7)
    out = engine.generate([GenerationRequest("f", prompt, params)])
    assert len({tuple(c.token_ids) for c in out}) > 1  # the samples went their own ways
    assert engine.stats.prefix_hit_rate == pytest.approx(3 / 4)
    ids, mask = pad_right([c.prompt_token_ids + c.token_ids for c in out], tokenizer.pad_token_id)
    with torch.no_grad():
        recomputed, _ = token_logprobs(tiny_model, ids, mask, temperature=1.0)
    for row, c in enumerate(out):
        start = len(c.prompt_token_ids) - 1
        assert torch.allclose(recomputed[row, start : start + len(c.token_ids)], torch.tensor(c.logprobs), atol=1e-4)
    assert engine.blocks.num_free == 64


def test_abort_before_the_prompt_is_computed_finishes_the_held_samples(tiny_model, tokenizer):
    engine = BuiltinEngine(copy.deepcopy(tiny_model), tokenizer, num_blocks=64)
    seqs = engine.add_requests([GenerationRequest("g", chat_ids(tokenizer, "hi"), SamplingParams(n=3, max_tokens=5))])
    engine.abort(["g"])
    assert [s.finish_reason for s in seqs] == ["abort"] * 3
    assert not engine.scheduler.has_work() and engine.blocks.num_free == 64


@pytest.mark.slow
def test_the_decode_cache_computes_what_gathering_from_the_paged_cache_does(smollm):
    """Sequences that stop at different steps (rows evicted and compacted), preemption (rows
    reloaded after recomputation) and a budget that fits only part of the run (falling back to
    gathering midway): the same tokens and the same logprobs to the bit as the gather path."""
    model, tokenizer = smollm
    prompts = [chat_ids(tokenizer, q) for q in QUESTIONS[:6]]
    params = SamplingParams(n=4, temperature=1.0, max_tokens=20, seed=11, stop_token_ids=[28, 30])

    def run(num_blocks, cache_bytes):
        engine = BuiltinEngine(copy.deepcopy(model), tokenizer, num_blocks=num_blocks, decode_cache_bytes=cache_bytes)
        out = engine.generate([GenerationRequest(str(i), p, params) for i, p in enumerate(prompts)])
        return engine, [(c.token_ids, c.logprobs) for c in out]

    _, gathered = run(2048, 0)
    lengths = {len(tokens) for tokens, _ in gathered}
    assert len(lengths) > 1  # some samples stopped early: their rows were evicted mid-batch
    cached_engine, cached = run(2048, None)
    assert cached_engine.runner.decode_cache.k_t is not None
    bit_equal = expects_bit_equality(model)

    def assert_same(run_a, run_b):  # where this CPU's attention layouts may round differently: within float noise
        assert [tokens for tokens, _ in run_a] == [tokens for tokens, _ in run_b]
        for (_, a), (_, b) in zip(run_a, run_b):
            assert_logprobs_match(a, b, bit_equal)

    assert_same(cached, gathered)
    preempting, preempted = run(14, None)
    assert preempting.stats.preemptions > 0
    assert_same(preempted, gathered)
    # room for every sample's prompt rounded up to a block, not for their whole length: the cache
    # serves the first steps, then declines and the engine gathers
    rows, positions = len(prompts) * params.n, -(-max(len(p) for p in prompts) // 16) * 16
    partial, partly = run(2048, cached_engine.runner.decode_cache.bytes_for(rows, positions))
    cache = partial.runner.decode_cache
    assert cache.steps_served > 0 and cache.steps_declined > 0
    assert_same(partly, gathered)


@pytest.mark.slow
def test_a_shared_prompt_prefix_read_once_computes_what_every_row_reading_it_does(smollm):
    """Requests that start with one long system prompt (over a key chunk of it) decoded together:
    the batch reads the prefix's keys and values once (SharedPrefix), and gives the same tokens
    and the same logprobs to the bit as the gather path, which reads each sequence's own copy,
    and as the trainer's full forward."""
    from posttrain.train.logprobs import pad_right, token_logprobs

    model, tokenizer = smollm
    system = "You are a careful assistant in a terminal. " * 16
    prompts = [
        chat_prompt_ids(tokenizer, [{"role": "system", "content": system}, {"role": "user", "content": q}])
        for q in QUESTIONS[:5]
    ]
    params = SamplingParams(n=2, temperature=1.0, max_tokens=24, seed=5, stop_token_ids=[28, 30])

    def run(cache_bytes):
        engine = BuiltinEngine(copy.deepcopy(model), tokenizer, decode_cache_bytes=cache_bytes)
        out = engine.generate([GenerationRequest(str(i), p, params) for i, p in enumerate(prompts)])
        return engine, out

    sharing, shared_out = run(None)
    assert sharing.runner.shared_prefix_min_tail is not None  # the start-up probe found it exact here
    assert sharing.runner.shared_prefix_steps > 0
    gathering, gathered_out = run(0)
    assert gathering.runner.shared_prefix_steps == 0
    bit_equal = expects_bit_equality(model)
    assert [c.token_ids for c in shared_out] == [c.token_ids for c in gathered_out]
    for a, b in zip(shared_out, gathered_out):
        assert_logprobs_match(a.logprobs, b.logprobs, bit_equal)
    trainer = use_engine_kernels(copy.deepcopy(model))
    ids, mask = pad_right([c.prompt_token_ids + c.token_ids for c in shared_out], tokenizer.pad_token_id)
    with torch.no_grad():
        recomputed, _ = token_logprobs(trainer, ids, mask, temperature=1.0)
    for row, c in enumerate(shared_out):
        start = len(c.prompt_token_ids) - 1
        assert_logprobs_match(recomputed[row, start : start + len(c.token_ids)], c.logprobs, bit_equal, row)
    # verifying drafts (several queries a sequence) with the prefix read once: greedy output and
    # logprobs as the plain engine's that gathers each row's own copy
    greedy = SamplingParams(temperature=0, max_tokens=24)
    requests = [GenerationRequest(str(i), p, greedy) for i, p in enumerate(prompts)]
    drafting = BuiltinEngine(copy.deepcopy(model), tokenizer, speculative=True)
    drafted = drafting.generate(requests)
    assert drafting.stats.draft_tokens > 0 and drafting.runner.shared_prefix_steps > 0
    plain = BuiltinEngine(copy.deepcopy(model), tokenizer, decode_cache_bytes=0).generate(requests)
    assert [c.token_ids for c in drafted] == [c.token_ids for c in plain]
    for a, b in zip(drafted, plain):
        assert_logprobs_match(a.logprobs, b.logprobs, bit_equal)
