"""Shared-prefix training on the real SmolLM2 and the builtin engine: a group's prompt run once
gives the same logprobs to the bit (the engine's, too) and the same gradients."""

import copy

import pytest
import torch

from posttrain.agent.loop import system_prompt
from posttrain.config import AlgorithmConfig, OptimConfig
from posttrain.engine.builtin.engine import BuiltinEngine
from posttrain.engine.builtin.engine_kernels import use_engine_kernels
from posttrain.engine.interface import GenerationRequest, SamplingParams
from posttrain.models.token_ids import chat_prompt_ids
from posttrain.train.logprobs import pad_right, token_logprobs
from posttrain.train.samples import TrainSample
from posttrain.train.shared_prefix import MIN_SHARED_TOKENS, common_prefix_length, shareable_prefix_length
from posttrain.train.trainer import PolicyTrainer
from tests.conftest import assert_logprobs_match, expects_bit_equality

GROUP = 4
TEMPERATURE = 0.8


def test_common_prefix_length():
    assert common_prefix_length([[1, 2, 3], [1, 2, 4], [1, 2]]) == 2
    assert common_prefix_length([[1, 2], [1, 2]]) == 2
    assert common_prefix_length([[5], [6]]) == 0


def test_the_prefix_stops_before_the_first_needed_logit_and_is_worth_a_pass():
    prompt = list(range(100))
    sequences = [prompt + [7, 8], prompt + [7, 9]]
    assert shareable_prefix_length(sequences, first_position=99) == 99  # logits at 99 predict token 100
    assert shareable_prefix_length(sequences, first_position=MIN_SHARED_TOKENS - 1) == 0
    assert shareable_prefix_length(sequences[:1], first_position=99) == 0  # alone: nothing to share


@pytest.fixture(scope="module")
def smollm():
    from posttrain.models.loading import load_model, load_tokenizer

    return load_model("smollm2-135m"), load_tokenizer("smollm2-135m")


@pytest.fixture(scope="module")
def episodes(smollm):
    """A group of two-turn agent episodes as the builtin engine samples them: the agent's
    system prompt and an instruction, a reply, a tool observation (masked), a second reply."""
    model, tokenizer = smollm
    engine = BuiltinEngine(copy.deepcopy(model), tokenizer)
    instruction = "The tests in /app fail: parse_date in /app/dates.py swaps day and month. Fix it."
    prompt = chat_prompt_ids(
        tokenizer, [{"role": "system", "content": system_prompt()}, {"role": "user", "content": instruction}]
    )
    first = engine.generate(
        [GenerationRequest("turn1", prompt, SamplingParams(n=GROUP, temperature=TEMPERATURE, max_tokens=24, seed=1))]
    )
    observation = tokenizer.encode("\n<tool_response>exit 1: 2 passed, 1 failed</tool_response>\n")
    second = engine.generate(
        [
            GenerationRequest(
                str(i),
                prompt + c.token_ids + observation,
                SamplingParams(temperature=TEMPERATURE, max_tokens=16, seed=2 + i),
            )
            for i, c in enumerate(first)
        ]
    )
    advantages = torch.linspace(-1, 1, GROUP).tolist()
    return [
        TrainSample(
            prompt,
            a.token_ids + observation + b.token_ids,
            a.logprobs + [0.0] * len(observation) + b.logprobs,
            advantage,
            [1] * len(a.token_ids) + [0] * len(observation) + [1] * len(b.token_ids),
        )
        for a, b, advantage in zip(first, second, advantages)
    ]


@pytest.mark.slow
def test_shared_prefix_logprobs_equal_the_full_forward_and_the_engines(smollm, episodes):
    model, tokenizer = smollm
    trainer_model = use_engine_kernels(copy.deepcopy(model))
    ids, mask = pad_right([s.prompt_ids + s.completion_ids for s in episodes], tokenizer.pad_token_id)
    first = len(episodes[0].prompt_ids) - 1
    with torch.no_grad():
        full, _ = token_logprobs(trainer_model, ids, mask, TEMPERATURE, first_position=first)
        shared, _ = token_logprobs(trainer_model, ids, mask, TEMPERATURE, first_position=first, prefix_length=first)
    bit_equal = expects_bit_equality(model)
    for row, sample in enumerate(episodes):
        own = torch.tensor(sample.completion_mask, dtype=torch.bool)
        span = slice(first, first + len(sample.completion_ids))
        assert torch.equal(full[row, span], shared[row, span]), row
        assert_logprobs_match(shared[row, span][own], torch.tensor(sample.engine_logprobs)[own], bit_equal, row)


def _trainer(model, pad_id: int, shared_prefix: bool) -> PolicyTrainer:
    optim = OptimConfig(lr=1e-5, micro_batch_tokens=100_000, shared_prefix=shared_prefix)
    return PolicyTrainer(use_engine_kernels(copy.deepcopy(model)), optim, AlgorithmConfig(), TEMPERATURE, pad_id)


@pytest.mark.slow
def test_a_step_with_the_prompt_run_once_has_the_same_logprobs_and_gradients(smollm, episodes):
    model, tokenizer = smollm
    shared = _trainer(model, tokenizer.pad_token_id, shared_prefix=True)
    full = _trainer(model, tokenizer.pad_token_id, shared_prefix=False)
    a, b = shared.step(episodes), full.step(episodes)
    prompt = len(episodes[0].prompt_ids)
    assert a["prefix_tokens_shared"] == (GROUP - 1) * (prompt - 1)
    assert b["prefix_tokens_shared"] == 0
    if expects_bit_equality(model):
        assert a["logprob_mismatch_max"] == b["logprob_mismatch_max"] == 0.0
    assert a["loss"] == b["loss"]  # the same logprobs in the same micro-batch
    # The prompt's gradient is summed in another order (the suffixes' contributions meet in the
    # one prefix pass instead of in one GEMM over every row's copy), so equal up to fp32
    # reassociation, not to the bit: measured at most 5e-6 of each tensor's largest entry.
    assert a["grad_norm"] == pytest.approx(b["grad_norm"], rel=1e-5)
    for (name, p), q in zip(shared.model.named_parameters(), full.model.parameters()):
        difference = (p.grad - q.grad).abs().max()
        assert difference <= 1e-4 * q.grad.abs().max(), (name, difference)
