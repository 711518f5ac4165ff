import copy

import pytest
import torch

from posttrain.config import AlgorithmConfig, OptimConfig
from posttrain.engine.hf_engine import HFEngine
from posttrain.engine.interface import GenerationRequest, SamplingParams
from posttrain.models.token_ids import chat_prompt_ids
from posttrain.rl import grpo_advantages
from posttrain.train.samples import TrainSample
from posttrain.train.trainer import PolicyTrainer


def prompt(tokenizer, text):
    return chat_prompt_ids(tokenizer, [{"role": "user", "content": text}])


def rollout(engine, tokenizer, n_prompts=3, n=4, max_tokens=6, temperature=1.0, seed=0):
    requests = [
        GenerationRequest(
            str(i),
            prompt(tokenizer, f"question {i} " * (i + 1)),
            SamplingParams(n=n, temperature=temperature, max_tokens=max_tokens, seed=seed * 100 + i),
        )
        for i in range(n_prompts)
    ]
    return engine.generate(requests)


def samples_from(completions, advantages):
    return [TrainSample(c.prompt_token_ids, c.token_ids, c.logprobs, float(a)) for c, a in zip(completions, advantages)]


def make_trainer(model, tokenizer, temperature=1.0, **optim):
    return PolicyTrainer(model, OptimConfig(**optim), AlgorithmConfig(), temperature, pad_id=tokenizer.pad_token_id)


def test_mismatch_against_engine_is_float_noise(tiny_model, tokenizer):
    engine = HFEngine(copy.deepcopy(tiny_model), tokenizer)
    completions = rollout(engine, tokenizer, temperature=0.8)
    trainer = make_trainer(tiny_model, tokenizer, temperature=0.8, lr=1e-4)
    stats = trainer.step(samples_from(completions, torch.linspace(-1, 1, len(completions))))
    assert stats["logprob_mismatch_max"] < 1e-4
    assert stats["grad_norm"] > 0
    assert stats["tis_weight_mean"] == pytest.approx(1.0, abs=1e-3)
    for key in ("loss", "entropy", "clip_fraction", "kl", "train_time_s"):
        assert key in stats


def test_micro_batching_does_not_change_the_gradient(tiny_model, tokenizer):
    engine = HFEngine(copy.deepcopy(tiny_model), tokenizer)
    completions = rollout(engine, tokenizer)
    advantages = torch.randn(len(completions), generator=torch.Generator().manual_seed(0))
    whole = make_trainer(copy.deepcopy(tiny_model), tokenizer, micro_batch_tokens=100_000)
    split = make_trainer(copy.deepcopy(tiny_model), tokenizer, micro_batch_tokens=64)
    a = whole.step(samples_from(completions, advantages))
    b = split.step(samples_from(completions, advantages))
    assert a["grad_norm"] == pytest.approx(b["grad_norm"], rel=1e-4)
    assert a["loss"] == pytest.approx(b["loss"], rel=1e-4, abs=1e-7)
    for (name, p), q in zip(whole.model.named_parameters(), split.model.parameters()):
        assert torch.allclose(p, q, atol=1e-6), name


def test_rl_raises_the_reward_of_a_tiny_policy(tiny_model, tokenizer):
    """A real learning check: reward = the completion starts with one chosen token. GRPO steps
    through the engine must make that token more likely."""
    engine = HFEngine(copy.deepcopy(tiny_model), tokenizer)
    trainer = make_trainer(tiny_model, tokenizer, lr=2e-2)
    first = rollout(engine, tokenizer, n_prompts=4, n=8, max_tokens=1, seed=0)
    target = max(set(c.token_ids[0] for c in first), key=[c.token_ids[0] for c in first].count)

    def reward_rate(completions):
        return sum(c.token_ids[0] == target for c in completions) / len(completions)

    start = reward_rate(first)
    completions = first
    for step in range(1, 9):
        rewards = torch.tensor([float(c.token_ids[0] == target) for c in completions]).view(4, 8)
        advantages = grpo_advantages(rewards).flatten()
        trainer.step(samples_from(completions, advantages))
        engine.update_weights(trainer.model.named_parameters(), version=step)
        completions = rollout(engine, tokenizer, n_prompts=4, n=8, max_tokens=1, seed=step)
    assert reward_rate(completions) >= min(1.0, start + 0.3)
    assert completions[0].version == 8


def test_the_trainers_token_values_are_what_the_mismatch_compares(tiny_model, tokenizer):
    engine = HFEngine(copy.deepcopy(tiny_model), tokenizer)
    completions = rollout(engine, tokenizer, temperature=0.8)
    trainer = make_trainer(tiny_model, tokenizer, temperature=0.8, lr=1e-4, micro_batch_tokens=64)
    samples = samples_from(completions, torch.linspace(-1, 1, len(completions)))
    stats = trainer.step(samples)
    values = trainer.last_token_values
    assert [len(v[0]) for v in values] == [len(s.completion_ids) for s in samples]
    assert [len(v[1]) for v in values] == [len(s.completion_ids) for s in samples]  # entropies
    worst = max(abs(t - e) for (lps, _), s in zip(values, samples) for t, e in zip(lps, s.engine_logprobs))
    assert worst == pytest.approx(stats["logprob_mismatch_max"], abs=1e-7)
    mean_entropy = sum(sum(ent) for _, ent in values) / sum(len(s.completion_ids) for s in samples)
    assert mean_entropy == pytest.approx(stats["entropy"], rel=1e-5)
