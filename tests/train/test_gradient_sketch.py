"""Count sketches of domains' gradients give the exact cosines within 0.05 (overall and per
module group), on real gradients of the tiny Llama and on a hundred random domains."""

import copy
import time

import pytest
import torch

from posttrain.config import AlgorithmConfig, OptimConfig
from posttrain.engine.hf_engine import HFEngine
from posttrain.engine.interface import GenerationRequest, SamplingParams
from posttrain.models.loading import load_model
from posttrain.models.token_ids import chat_prompt_ids
from posttrain.train.gradient_conflict import gradient_cosines
from posttrain.train.gradient_sketch import most_conflicting_pairs, sketch_cosines, sketch_gradient, sketch_tensor
from posttrain.train.samples import TrainSample
from posttrain.train.trainer import PolicyTrainer


def test_a_sketch_preserves_inner_products_and_is_the_same_map_for_every_tensor():
    generator = torch.Generator().manual_seed(0)
    a = torch.randn(50_000, generator=generator)
    b = 0.6 * a + 0.8 * torch.randn(50_000, generator=generator)  # cosine 0.6
    sa, sb = sketch_tensor(a, 7, 8192), sketch_tensor(b, 7, 8192)
    exact = float(a @ b / (a.norm() * b.norm()))
    assert abs(float(sa @ sb / (sa.norm() * sb.norm())) - exact) < 0.03
    assert torch.equal(sketch_tensor(a, 7, 8192), sa)  # deterministic
    assert abs(float(sketch_tensor(a, 8, 8192) @ sb)) < abs(float(sa @ sb))  # another salt: another map


def test_sketch_width_must_be_a_power_of_two():
    with pytest.raises(ValueError, match="power of two"):
        sketch_gradient({"w": torch.ones(3)}, width=1000)


@pytest.fixture(scope="module")
def domain_gradients(tokenizer):
    """Four 'domains': real rollouts of the tiny Llama on four prompts, each domain's loss
    gradient with rewards of its own."""
    model = load_model("tiny-llama", seed=0)
    engine = HFEngine(copy.deepcopy(model), tokenizer)
    requests = [
        GenerationRequest(
            str(i),
            chat_prompt_ids(tokenizer, [{"role": "user", "content": f"domain {i} " * (i + 2)}]),
            SamplingParams(n=4, temperature=1.0, max_tokens=8, seed=i),
        )
        for i in range(4)
    ]
    trainer = PolicyTrainer(model, OptimConfig(micro_batch_tokens=256), AlgorithmConfig(), 1.0, tokenizer.pad_token_id)
    advantages = [[1.0, -1.0, 0.5, -0.5], [-1.0, 1.0, -0.5, 0.5], [1.0, 1.0, -1.0, -1.0], [0.3, -0.7, 0.9, -0.5]]
    completions = engine.generate(requests)  # four per request, in order
    return {
        f"d{i}": trainer.loss_gradient(
            [TrainSample(c.prompt_token_ids, c.token_ids, c.logprobs, a) for c, a in zip(completions[4 * i :], adv)]
        )
        for i, adv in enumerate(advantages)
    }


def test_sketched_cosines_of_real_gradients_are_within_0_05_of_the_exact_ones(domain_gradients):
    exact = gradient_cosines(domain_gradients)
    sketched = sketch_cosines({d: sketch_gradient(g) for d, g in domain_gradients.items()})
    for pair, value in exact["overall"].items():
        assert abs(sketched["overall"][pair] - value) <= 0.05, pair
    for group, pairs in exact["groups"].items():
        for pair, value in pairs.items():
            assert abs(sketched["groups"][group][pair] - value) <= 0.05, (group, pair)
    for domain, norm in exact["norms"].items():
        assert sketched["norms"][domain] == pytest.approx(norm, rel=0.05)
    assert any(abs(v) > 0.1 for v in exact["overall"].values())  # the check compares real signal


def test_a_hundred_domains_make_a_full_matrix_and_name_the_most_conflicting_pairs():
    generator = torch.Generator().manual_seed(1)
    shared = torch.randn(4096, generator=generator)
    sketches = {}
    for i in range(100):
        sign = -1.0 if i == 7 else 1.0  # one domain pulls against the shared direction
        gradient = {"model.layers.0.mlp.up.weight": sign * shared + torch.randn(4096, generator=generator)}
        sketches[f"d{i:03d}"] = sketch_gradient(gradient, width=1024)
    started = time.perf_counter()
    cosines = sketch_cosines(sketches)
    assert len(cosines["overall"]) == 100 * 99 // 2
    assert time.perf_counter() - started < 60  # generous bound: the matrix is one product per group
    worst = most_conflicting_pairs(cosines, 5)
    assert all("d007" in row["pair"] and row["cosine"] < -0.3 for row in worst)
