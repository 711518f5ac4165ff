"""Speculative decoding in the builtin engine is lossless: greedy output token for token, the
sampling distribution kept (the accept/reject rule, checked statistically), and logprobs the
trainer recomputes to the bit (logprob_mismatch_max 0.0)."""

import copy

import pytest
import torch

from posttrain.config import AlgorithmConfig, OptimConfig
from posttrain.engine.builtin.draft_verification import verify_draft
from posttrain.engine.builtin.drafters import OutputHistory, PromptLookup
from posttrain.engine.builtin.engine import BuiltinEngine
from posttrain.engine.builtin.engine_kernels import use_engine_kernels
from posttrain.engine.builtin.sequence import Sequence
from posttrain.engine.builtin.speculation import EXPLORE_EVERY, SpeculationPolicy, worth_drafting
from posttrain.engine.interface import GenerationRequest, SamplingParams
from posttrain.models.token_ids import chat_prompt_ids
from posttrain.train.samples import TrainSample
from posttrain.train.trainer import PolicyTrainer
from tests.conftest import expects_bit_equality

CODE = "def add(a, b):\n    return a + b\n\ndef sub(a, b):\n    return a - b\n"
PROMPTS = [
    "Copy this code exactly:\n" + CODE * 2,
    "Repeat after me: the quick brown fox jumps over the lazy dog. The quick brown fox",
    "What is the capital of France?",
    "List the numbers 1, 2, 3, 4, 5, 6, 7, 8, 9, 10 and then again 1, 2, 3,",
]


@pytest.fixture(scope="module")
def smollm():
    from posttrain.models.loading import load_model, load_tokenizer

    return load_model("smollm2-135m"), load_tokenizer("smollm2-135m")


def _prompts(tokenizer):
    return [chat_prompt_ids(tokenizer, [{"role": "user", "content": p}]) for p in PROMPTS]


def test_prompt_lookup_and_output_history_propose_what_followed():
    lookup = PromptLookup()
    tokens = [1, 2, 3, 4, 5, 9, 2, 3]
    assert lookup.propose(tokens, 2) == (2, [4, 5])
    assert lookup.propose(tokens + [4, 5], 3) == (4, [9, 2, 3])  # longest n-gram wins
    history = OutputHistory(capacity=12)
    history.add([7, 8, 9, 10, 11])
    assert history.propose([0, 8, 9], 2) == (2, [10, 11])
    history.add(list(range(20, 32)))  # pushes the first output out
    assert history.propose([0, 8, 9], 2) == (0, [])


def test_verification_keeps_the_sampling_distribution():
    """Draft d is kept with p(d), else the token is drawn from p without d: the first token is
    distributed as p, and the second (after an accepted draft) as the next row's p. Checked by
    chi-square."""
    torch.manual_seed(0)
    vocab = 6
    logits = torch.randn(3, vocab) * 1.5
    params = SamplingParams(temperature=0.9, top_p=0.95)
    from posttrain.engine.builtin.sampler import sampling_probs

    _, probs = sampling_probs(logits, params)
    draft = [int(probs[0].argmax()), 2]
    generator = torch.Generator().manual_seed(1)
    trials = 20_000
    first = torch.zeros(vocab)
    second = torch.zeros(vocab)
    for _ in range(trials):
        tokens, logprobs = verify_draft(logits, draft, params, generator)
        first[tokens[0]] += 1
        if tokens[0] == draft[0]:
            second[tokens[1]] += 1
        expected = torch.log_softmax(logits[: len(tokens)] / 0.9, -1).gather(-1, torch.tensor(tokens)[:, None])
        assert logprobs == expected.squeeze(-1).tolist()
    for observed, p in ((first, probs[0]), (second, probs[1])):
        total = observed.sum()
        support = p > 0
        expected = p[support] * total
        chi2 = float(((observed[support] - expected) ** 2 / expected).sum())
        assert observed[~support].sum() == 0  # truncated tokens never appear
        assert chi2 < 25.0, (chi2, observed, expected)  # 5 degrees of freedom: p < 1e-4 under the null


def test_speculation_follows_the_measured_rates_per_batch_size():
    """Untried choices are tried first; then the faster one wins, with an occasional retry of
    the other (16 steps after a new verdict, then twice as long after each retry that keeps
    it); batch sizes are measured apart."""
    policy = SpeculationPolicy()
    policy.acceptance = 1.0  # drafts always accepted: the acceptance gate lets every token through
    seqs = []
    for i in range(4):
        seq = Sequence(i, str(i), 0, [5, 6, 7, 5, 6], SamplingParams(max_tokens=32), 16, arrival=i)
        seq.append(7, 0.0, 0)
        seqs.append(seq)
    assert policy.plan(seqs, 1000) == {s.seq_id: [5, 6, 7] for s in seqs}  # speculating: not measured yet
    policy.rates.record(4, True, tokens=6, seconds=1.0)
    assert policy.plan(seqs, 1000) == {}  # plain: not measured yet
    policy.rates.record(4, False, tokens=4, seconds=0.5)
    choices = [bool(policy.plan(seqs, 1000)) for _ in range(EXPLORE_EVERY * 7)]
    # plain is faster (8 tok/s against 6): speculation only to re-check, at growing intervals
    assert [i for i, speculated in enumerate(choices) if speculated] == [15, 15 + 32, 15 + 32 + 64]
    assert policy.plan(seqs[:1], 1000)  # one sequence is another bucket, not measured yet
    policy.rates.record(4, True, tokens=40, seconds=1.0)
    policy.rates.record(4, True, tokens=40, seconds=1.0)
    assert policy.plan(seqs, 1000)  # now speculating measures faster


def test_a_step_that_also_prefills_follows_the_verdict_without_exploring():
    """Steps carrying a prompt are not measured: no drafts before a verdict, the verdict after
    it, and the re-check schedule of measured steps is not moved."""
    policy = SpeculationPolicy()
    policy.acceptance = 1.0
    seqs = []
    for i in range(4):
        seq = Sequence(i, str(i), 0, [5, 6, 7, 5, 6], SamplingParams(max_tokens=32), 16, arrival=i)
        seq.append(7, 0.0, 0)
        seqs.append(seq)
    assert policy.plan(seqs, 1000, measured=False) == {}  # no verdict yet: no drafts
    policy.rates.record(4, True, tokens=40, seconds=1.0)
    policy.rates.record(4, False, tokens=4, seconds=0.5)
    assert policy.plan(seqs, 1000)  # measured: speculating is faster
    steps = dict(policy.rates.steps)
    assert all(policy.plan(seqs, 1000, measured=False) for _ in range(EXPLORE_EVERY * 2))
    assert policy.rates.steps == steps  # no re-check was spent on them
    for _ in range(10):
        policy.rates.record(4, True, tokens=1, seconds=1.0)
    assert policy.plan(seqs, 1000) == {}  # the measured verdict turned: plain
    assert policy.plan(seqs, 1000, measured=False) == {}


def test_large_batches_draft_only_tokens_likely_to_be_accepted():
    """The bar rises with the batch: anything at one sequence, half the time at 16."""
    assert worth_drafting(0.3, 1, 8) == 8
    assert worth_drafting(0.9, 16, 8) == 6  # 0.9 ** 6 = 0.53 >= 0.5 > 0.9 ** 7
    assert worth_drafting(0.45, 16, 8) == 0  # short chat answers: a large batch drafts nothing
    assert worth_drafting(0.4, 4, 8) == 1  # 0.4 >= 4 / 20 > 0.4 ** 2

    policy = SpeculationPolicy()
    seqs = []
    for i in range(16):
        seq = Sequence(i, str(i), 0, [5, 6, 7, 5, 6], SamplingParams(max_tokens=32), 16, arrival=i)
        seq.append(7, 0.0, 0)
        seqs.append(seq)
    policy.acceptance = 0.3  # what earlier drafts measured
    assert policy.plan(seqs, 1000) == {}
    assert policy.plan(seqs[:1], 1000) == {0: [5, 6, 7]}  # one sequence: drafting is nearly free
    for _ in range(8):
        policy.observe(seqs[0], 3, 3)  # its drafts are all accepted: its own estimate rises
    assert policy.plan(seqs, 1000)[0]


@pytest.mark.slow
def test_greedy_output_equals_standard_token_for_token(smollm):
    model, tokenizer = smollm
    prompts = _prompts(tokenizer)
    params = SamplingParams(temperature=0, max_tokens=24)
    outputs = {}
    for speculative in (False, True):
        engine = BuiltinEngine(copy.deepcopy(model), tokenizer, speculative=speculative)
        one_by_one = [engine.generate([GenerationRequest(str(i), p, params)])[0] for i, p in enumerate(prompts)]
        batched = engine.generate([GenerationRequest(str(i), p, params) for i, p in enumerate(prompts)])
        assert [c.token_ids for c in batched] == [c.token_ids for c in one_by_one]
        outputs[speculative] = (one_by_one, engine.stats)
    standard, fast = outputs[False][0], outputs[True][0]
    assert [c.token_ids for c in fast] == [c.token_ids for c in standard]
    if expects_bit_equality(model):
        assert [c.logprobs for c in fast] == [c.logprobs for c in standard]
    stats = outputs[True][1]
    assert stats.accepted_draft_tokens > 15 and 0 < stats.acceptance_rate <= 1


@pytest.mark.slow
def test_rollouts_with_speculation_have_zero_logprob_mismatch(smollm):
    """`[engine] speculative = true` for RL: the trainer's recomputed logprobs of sampled,
    partly speculated completions equal the engine's (logprob_mismatch_max == 0.0)."""
    model, tokenizer = smollm
    engine = BuiltinEngine(copy.deepcopy(model), tokenizer, speculative=True)
    prompt = _prompts(tokenizer)[0]
    params = SamplingParams(n=4, temperature=0.7, max_tokens=32, seed=5)
    completions = engine.generate([GenerationRequest("a", prompt, params)])
    assert engine.stats.accepted_draft_tokens > 0  # some tokens came from verified drafts
    # one uniform number per appended token, as in plain decoding: seeded samples are the same
    standard = BuiltinEngine(copy.deepcopy(model), tokenizer).generate([GenerationRequest("a", prompt, params)])
    assert [c.token_ids for c in completions] == [c.token_ids for c in standard]
    samples = [
        TrainSample(c.prompt_token_ids, c.token_ids, c.logprobs, advantage)
        for c, advantage in zip(completions, (-1.0, -0.5, 0.5, 1.0))
    ]
    optim = OptimConfig(lr=1e-6, micro_batch_tokens=100_000)
    trainer = PolicyTrainer(use_engine_kernels(copy.deepcopy(model)), optim, AlgorithmConfig(), 0.7, 2)
    stats = trainer.step(samples)
    if expects_bit_equality(model):
        assert stats["logprob_mismatch_max"] == 0.0
    else:
        assert stats["logprob_mismatch_max"] < 1e-4


@pytest.mark.parametrize("decode_cache_bytes", [None, 0], ids=["decode-cache", "gather"])
def test_tiny_model_greedy_equality_on_both_decode_paths(tiny_model, tokenizer, decode_cache_bytes):
    """Draft queries ride the decode fast path (DecodeCache rows) or, where it declines, the
    prefill path: the same tokens and logprobs as plain decoding either way."""
    prompts = [[5, 6, 7, 8] * 6, [9, 10, 11] * 5, [12, 13] * 9]
    params = SamplingParams(temperature=0, max_tokens=40)
    requests = [GenerationRequest(str(i), p, params) for i, p in enumerate(prompts)]
    standard = BuiltinEngine(copy.deepcopy(tiny_model), tokenizer).generate(requests)
    engine = BuiltinEngine(
        copy.deepcopy(tiny_model), tokenizer, speculative=True, decode_cache_bytes=decode_cache_bytes
    )
    fast = engine.generate(requests)
    assert engine.stats.accepted_draft_tokens > 0
    assert [c.token_ids for c in fast] == [c.token_ids for c in standard]
    if expects_bit_equality(tiny_model):
        assert [c.logprobs for c in fast] == [c.logprobs for c in standard]


def test_steps_that_grow_the_decode_cache_do_not_inform_the_choice(tiny_model, tokenizer):
    """A reallocation of the decode cache is a one-off cost of the step it falls in, not of
    speculating or not: such steps are left out of the measured rates."""
    engine = BuiltinEngine(copy.deepcopy(tiny_model), tokenizer, speculative=True)
    recorded, step = [], engine.step
    record = engine.speculation.policy.rates.record

    def tracked_record(*args):
        recorded[-1][1] = True
        record(*args)

    def tracked_step():
        before = engine.runner.decode_cache.growths
        recorded.append([False, False])
        step()
        recorded[-1][0] = engine.runner.decode_cache.growths > before

    engine.speculation.policy.rates.record, engine.step = tracked_record, tracked_step
    params = SamplingParams(temperature=0, max_tokens=12)
    prompts = [[5, 6, 7, 8] * 6, [9, 10, 11] * 5, [12, 13] * 9, [14, 15, 16] * 4]
    # the batch grows from one sequence to four: the cache grows in pure decode steps
    engine.generate([GenerationRequest("0", prompts[0], params)])
    engine.generate([GenerationRequest(str(i), p, params) for i, p in enumerate(prompts)])
    assert any(grew for grew, _ in recorded) and any(rec for _, rec in recorded)
    assert not any(grew and rec for grew, rec in recorded)
