import copy

import pytest
import torch

from posttrain.engine.hf_engine import HFEngine
from posttrain.engine.interface import GenerationRequest, SamplingParams
from posttrain.models.token_ids import chat_prompt_ids
from posttrain.train.logprobs import pad_right, token_logprobs


def prompt(tokenizer, text="Add 2 and 3."):
    return chat_prompt_ids(tokenizer, [{"role": "user", "content": text}])


def test_n_samples_per_prompt_in_order_with_version(tiny_model, tokenizer):
    engine = HFEngine(tiny_model, tokenizer, version=3)
    params = SamplingParams(n=3, temperature=1.0, max_tokens=6, seed=1)
    out = engine.generate(
        [GenerationRequest("a", prompt(tokenizer), params), GenerationRequest("b", prompt(tokenizer, "Hi"), params)]
    )
    assert [(c.request_id, c.sample_index) for c in out] == [("a", 0), ("a", 1), ("a", 2), ("b", 0), ("b", 1), ("b", 2)]
    for c in out:
        assert c.version == 3 and c.token_versions == [3] * len(c.token_ids)
        assert 1 <= len(c.token_ids) == len(c.logprobs) <= 6
        assert all(lp <= 0 for lp in c.logprobs)
        assert c.finish_reason in ("stop", "length")


def test_seeded_sampling_is_reproducible(tiny_model, tokenizer):
    engine = HFEngine(tiny_model, tokenizer)
    request = [GenerationRequest("a", prompt(tokenizer), SamplingParams(n=4, temperature=1.0, max_tokens=8, seed=42))]
    first = [c.token_ids for c in engine.generate(request)]
    again = [c.token_ids for c in engine.generate(request)]
    assert first == again
    other = [
        c.token_ids
        for c in engine.generate(
            [GenerationRequest("a", prompt(tokenizer), SamplingParams(n=4, temperature=1.0, max_tokens=8, seed=43))]
        )
    ]
    assert other != first


def test_engine_logprobs_match_trainer_recompute(tiny_model, tokenizer):
    """The zero-mismatch contract, at float noise for fp32: engine logprobs (temperature-scaled,
    from generation with a KV cache and left padding) equal a full forward pass's."""
    engine = HFEngine(tiny_model, tokenizer)
    temperature = 0.7
    out = engine.generate(
        [
            GenerationRequest(
                str(i),
                prompt(tokenizer, "x" * (i + 1)),
                SamplingParams(n=2, temperature=temperature, max_tokens=10, seed=i),
            )
            for i in range(3)
        ]
    )
    ids, mask = pad_right([c.prompt_token_ids + c.token_ids for c in out], tokenizer.pad_token_id)
    with torch.no_grad():
        recomputed, _ = token_logprobs(tiny_model, ids, mask, temperature)
    worst = 0.0
    for row, c in enumerate(out):
        start = len(c.prompt_token_ids) - 1
        got = recomputed[row, start : start + len(c.token_ids)]
        worst = max(worst, float((got - torch.tensor(c.logprobs)).abs().max()))
    assert worst < 1e-4


def test_greedy_matches_argmax_and_stop_strings(tiny_model, tokenizer):
    engine = HFEngine(tiny_model, tokenizer)
    greedy = engine.generate(
        [GenerationRequest("g", prompt(tokenizer), SamplingParams(temperature=0.0, max_tokens=8))]
    )[0]
    ids = torch.tensor([greedy.prompt_token_ids])
    with torch.no_grad():
        first_token = int(tiny_model(ids).logits[0, -1].argmax())
    assert greedy.token_ids[0] == first_token
    stop = tokenizer.decode(greedy.token_ids[2:4])
    if stop.strip():
        stopped = engine.generate(
            [GenerationRequest("s", prompt(tokenizer), SamplingParams(temperature=0.0, max_tokens=8, stop=(stop,)))]
        )[0]
        assert stopped.finish_reason == "stop"
        assert stop not in stopped.text
        assert len(stopped.token_ids) <= 4


def test_update_weights_changes_outputs_and_version(tiny_model, tokenizer):
    engine = HFEngine(copy.deepcopy(tiny_model), tokenizer)
    request = [GenerationRequest("g", prompt(tokenizer), SamplingParams(temperature=0.0, max_tokens=5))]
    before = engine.generate(request)[0]
    new_weights = {name: p.detach() + 0.5 * torch.randn_like(p) for name, p in tiny_model.named_parameters()}
    engine.update_weights(new_weights.items(), version=7)
    after = engine.generate(request)[0]
    assert after.version == 7
    assert after.logprobs != before.logprobs
    with pytest.raises(KeyError, match="no tensor named 'nope'"):
        engine.update_weights([("nope", torch.zeros(1))], version=8)


def test_sampling_params_validation():
    with pytest.raises(ValueError, match="top_p"):
        SamplingParams(top_p=0.0)
    with pytest.raises(ValueError, match="n must be"):
        SamplingParams(n=0)
