import copy

import pytest
import torch

from posttrain.config import AlgorithmConfig, OptimConfig
from posttrain.engine.hf_engine import HFEngine
from posttrain.engine.interface import GenerationRequest, SamplingParams
from posttrain.models.loading import load_model
from posttrain.models.token_ids import chat_prompt_ids
from posttrain.train.gradient_conflict import conflict_summary, gradient_cosines, module_group
from posttrain.train.samples import TrainSample
from posttrain.train.trainer import PolicyTrainer

TINY_LLAMA_GROUPS = {
    "embeddings",  # tied: also the head
    "layer0.attention",
    "layer0.mlp",
    "layer0.norm",
    "layer1.attention",
    "layer1.mlp",
    "layer1.norm",
    "final_norm",
}


@pytest.fixture(scope="module")
def model():
    return load_model("tiny-llama", seed=0)


@pytest.fixture(scope="module")
def completions(model, tokenizer):
    """Real rollouts of the tiny Llama: three prompts, four completions each."""
    engine = HFEngine(copy.deepcopy(model), tokenizer)
    requests = [
        GenerationRequest(
            str(i),
            chat_prompt_ids(tokenizer, [{"role": "user", "content": f"question {i} " * (i + 1)}]),
            SamplingParams(n=4, temperature=1.0, max_tokens=6, seed=i),
        )
        for i in range(3)
    ]
    return engine.generate(requests)


def batch(completions, advantages) -> list[TrainSample]:
    return [TrainSample(c.prompt_token_ids, c.token_ids, c.logprobs, float(a)) for c, a in zip(completions, advantages)]


def trainer_of(model, tokenizer, **algorithm) -> PolicyTrainer:
    return PolicyTrainer(
        copy.deepcopy(model),
        OptimConfig(lr=1e-2, warmup_steps=2, micro_batch_tokens=64),
        AlgorithmConfig(**algorithm),
        1.0,
        pad_id=tokenizer.pad_token_id,
    )


def advantages(n, seed):
    return torch.randn(n, generator=torch.Generator().manual_seed(seed))


def assert_same_tensors(a, b) -> None:
    if isinstance(a, dict):
        assert a.keys() == b.keys()
        for key in a:
            assert_same_tensors(a[key], b[key])
    elif isinstance(a, (list, tuple)):
        assert len(a) == len(b)
        for x, y in zip(a, b):
            assert_same_tensors(x, y)
    elif isinstance(a, torch.Tensor):
        assert torch.equal(a, b)
    else:
        assert a == b


def test_loss_gradient_leaves_the_trainer_bit_identical(model, tokenizer, completions):
    n = len(completions)
    first, probe, next_ = (batch(completions, advantages(n, seed)) for seed in (1, 2, 3))
    untouched, probed = trainer_of(model, tokenizer), trainer_of(model, tokenizer)
    untouched.step(first)
    probed.step(first)  # so that AdamW has moments to disturb

    gradients = probed.loss_gradient(probe)

    assert gradients.keys() == {name for name, p in probed.model.named_parameters() if p.requires_grad}
    assert all(g.dtype == torch.float32 and not g.requires_grad for g in gradients.values())
    assert all(p.grad is None for p in probed.model.parameters())
    for (name, p), q in zip(probed.model.named_parameters(), untouched.model.parameters()):
        assert torch.equal(p, q), name
    assert_same_tensors(probed.optimizer.state_dict(), untouched.optimizer.state_dict())
    assert probed.lr_schedule.state_dict() == untouched.lr_schedule.state_dict()

    expected, got = untouched.step(next_), probed.step(next_)
    expected.pop("train_time_s"), got.pop("train_time_s")
    assert got == expected
    for (name, p), q in zip(probed.model.named_parameters(), untouched.model.parameters()):
        assert torch.equal(p, q), name


def test_a_batch_against_itself_has_cosine_one(model, tokenizer, completions):
    trainer = trainer_of(model, tokenizer)
    samples = batch(completions, advantages(len(completions), 4))
    cosines = gradient_cosines({"a": trainer.loss_gradient(samples), "b": trainer.loss_gradient(samples)})

    assert cosines["overall"]["a|b"] == pytest.approx(1.0, abs=1e-5)
    for group, by_pair in cosines["groups"].items():
        assert by_pair["a|b"] == pytest.approx(1.0, abs=1e-5), group
    # the gradient step() takes: its grad_norm is measured before clipping, and summed in fp32
    # (2.5e-5 off the float64 norm over the embeddings' 3M entries)
    assert cosines["norms"]["a"] == pytest.approx(trainer.step(samples)["grad_norm"], rel=1e-4)


def test_negated_advantages_give_cosine_minus_one_in_every_group(model, tokenizer, completions):
    """At ratio 1 the clipped surrogate is linear in the advantage. The default TIS cap stays on:
    its weights depend on the trainer's and engine's logprobs only, not on the advantage, so they
    scale both gradients alike (kl_coef is 0: a KL term would not change sign)."""
    trainer = trainer_of(model, tokenizer, loss="ppo_clip")
    values = advantages(len(completions), 5)
    cosines = gradient_cosines(
        {
            "plus": trainer.loss_gradient(batch(completions, values)),
            "minus": trainer.loss_gradient(batch(completions, -values)),
        }
    )

    assert cosines["overall"]["minus|plus"] == pytest.approx(-1.0, abs=1e-5)
    nonzero = [group for group, norms in cosines["group_norms"].items() if norms["plus"] > 0]
    assert set(nonzero) == TINY_LLAMA_GROUPS
    for group in nonzero:
        assert cosines["groups"][group]["minus|plus"] == pytest.approx(-1.0, abs=1e-5), group


def test_module_group_covers_every_parameter_of_the_tiny_llama(model):
    groups = {name: module_group(name) for name, _ in model.named_parameters()}
    assert set(groups.values()) == TINY_LLAMA_GROUPS
    assert module_group("lm_head.weight") == "head"
    assert module_group("model.layers.11.post_attention_layernorm.weight") == "layer11.norm"
    assert module_group("base_model.model.model.layers.3.self_attn.q_proj.lora_A.weight") == "layer3.attention"
    assert module_group("score.weight") == "other"


def test_a_conflict_in_one_group_shows_under_a_near_zero_overall_cosine(model):
    """Two random gradients, orthogonal parameter by parameter except layer 0's MLP, which points
    exactly the other way: 24k of 3.2M parameters, so the overall cosine stays near 0."""
    generator = torch.Generator().manual_seed(0)
    a = {name: torch.randn(p.shape, generator=generator) for name, p in model.named_parameters()}
    b = {}
    for name, g in a.items():
        noise = torch.randn(g.shape, generator=generator)
        orthogonal = noise - (noise * g).sum() / (g * g).sum() * g
        b[name] = -g if module_group(name) == "layer0.mlp" else orthogonal
    zero = {name: torch.zeros_like(g) for name, g in a.items()}

    cosines = gradient_cosines({"math": a, "code": b, "silent": zero})
    summary = conflict_summary(cosines)

    assert abs(cosines["overall"]["code|math"]) < 0.02
    assert summary["code|math"]["most_negative_group"] == "layer0.mlp"
    assert summary["code|math"]["most_negative_cosine"] == pytest.approx(-1.0, abs=1e-6)
    assert summary["code|math"]["groups_below_threshold"] == ["layer0.mlp"]
    assert cosines["overall"]["math|silent"] == 0.0  # a zero gradient: cosine defined as 0
    assert summary["math|silent"]["groups_below_threshold"] == []
    assert cosines["norms"]["silent"] == 0.0
