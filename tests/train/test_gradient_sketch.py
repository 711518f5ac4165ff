"""Count sketches of domains' gradients give the exact cosines within 0.05 (overall and per
module group), on real gradients of the tiny Llama and on a hundred random domains."""

import time

import pytest
import torch

from posttrain.train.gradient_conflict import gradient_cosines
from posttrain.train.gradient_sketch import most_conflicting_pairs, sketch_cosines, sketch_gradient, sketch_tensor
from tests.train.test_gradient_conflict import batch, completions, model, trainer_of  # noqa: F401 - fixtures


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
def domain_gradients(model, tokenizer, completions):  # noqa: F811 - the fixtures imported above
    """Three 'domains': the tiny Llama's rollouts of three prompts, each domain's loss gradient
    with advantages of its own."""
    trainer = trainer_of(model, tokenizer)
    advantages = [[1.0, -1.0, 0.5, -0.5], [-1.0, 1.0, -0.5, 0.5], [0.3, -0.7, 0.9, -0.5]]
    return {
        f"d{i}": trainer.loss_gradient(batch(completions[4 * i : 4 * i + 4], adv)) for i, adv in enumerate(advantages)
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
    # the check compares real signal: some module groups agree or conflict clearly
    assert any(abs(v) > 0.1 for pairs in exact["groups"].values() for v in pairs.values())


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
