"""Multi-turn samples: the loss covers the model's own tokens only; no gradient reaches the
logits that predict tool-observation tokens."""

import copy

import pytest
import torch

from posttrain.config import AlgorithmConfig, OptimConfig
from posttrain.train.samples import TrainSample
from posttrain.train.trainer import PolicyTrainer


@pytest.mark.parametrize("chunk", [1024, 2, 0])
def test_no_gradient_flows_through_observation_tokens(tiny_model, chunk):
    model = copy.deepcopy(tiny_model)
    optim = OptimConfig(lr=1e-4, logprob_chunk_tokens=chunk)
    trainer = PolicyTrainer(model, optim, AlgorithmConfig(tis_cap=None), temperature=1.0, pad_id=0)
    # prompt 3 tokens; then: model, model, observation, observation, model
    sample = TrainSample(
        [5, 6, 7], [10, 11, 50, 51, 12], [-1.0, -1.0, 0.0, 0.0, -1.0], advantage=1.0, completion_mask=[1, 1, 0, 0, 1]
    )
    captured = []

    def keep_grad(module, inputs, output):
        # a chunk's recompute in the backward pass hooks its output too, but no gradient flows there
        output.register_hook(lambda grad: captured.append(grad.detach().clone()))

    handle = model.lm_head.register_forward_hook(keep_grad)
    stats = trainer.step([sample])
    handle.remove()
    # logits rows cover positions 2..6 (in chunks: backward meets the last chunk first), and
    # without chunks position 7 too; row r predicts token r + 3 of the sequence
    per_row = torch.cat([grad[0].abs().sum(-1) for grad in reversed(captured)])
    predicts = [10, 11, 50, 51, 12]
    for row, token in enumerate(predicts):
        if token in (50, 51):
            assert per_row[row] == 0, f"gradient reached the logits predicting observation token {token}"
        else:
            assert per_row[row] > 0
    assert len(per_row) == (6 if chunk == 0 else 5)
    assert per_row[5:].sum() == 0  # the position after the last token predicts nothing
    assert stats["train_tokens"] == 8.0


def test_the_mask_changes_the_update(tiny_model):
    """Observation tokens counted as the model's would change the step: the mask is not a no-op."""
    results = []
    for mask in ([1, 1, 0, 0, 1], None):
        model = copy.deepcopy(tiny_model)
        trainer = PolicyTrainer(model, OptimConfig(lr=1e-3), AlgorithmConfig(tis_cap=None), temperature=1.0, pad_id=0)
        trainer.step([TrainSample([5, 6, 7], [10, 11, 50, 51, 12], [-1.0] * 5, 1.0, mask)])
        results.append(torch.cat([p.detach().flatten() for p in model.parameters()]))
    assert not torch.equal(results[0], results[1])
