"""Where a run starts: the trainer (policy, optimizer, reference model) and the engine's copy of
the policy, fresh or restored from the last checkpoint together with the data stream's position,
the RNG and the rollout side's saved state."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch

from posttrain.config import RunConfig
from posttrain.models.loading import load_model
from posttrain.pipeline.build import load_policy_pair
from posttrain.tasks.domains import DomainMixture
from posttrain.train.checkpoint import (
    clean_partial_checkpoints,
    latest_checkpoint,
    load_checkpoint_state,
    load_pipeline_state,
    restore_rng_state,
)
from posttrain.train.trainer import PolicyTrainer


@dataclass
class StartingPoint:
    trainer: PolicyTrainer
    engine_model: torch.nn.Module  # a separate copy; weights are synced into it after each step
    step: int = 0  # the last step trained; 0 for a fresh run
    wall_s: float = 0.0  # wall time of the sessions before this one
    pipeline_state: dict[str, Any] | None = None  # the rollout scheduler's, saved with the checkpoint


def starting_point(
    config: RunConfig,
    checkpoints: Path,
    resume: bool,
    tokenizer,
    mixture: DomainMixture,
    initial_weights: Path | None = None,
) -> StartingPoint:
    """The run's start; on resume also moves `mixture` to where the checkpoint left it.
    `initial_weights`: the policy (and KL reference) to start from instead of [model] name."""
    checkpoint = latest_checkpoint(checkpoints) if resume else None
    clean_partial_checkpoints(checkpoints)
    trainer_model, engine_model = load_policy_pair(config, weights_from=checkpoint or initial_weights)
    reference_spec = str(initial_weights) if initial_weights else config.model.name
    reference = load_model(reference_spec, "float32", seed=config.seed).eval() if config.algorithm.kl_coef > 0 else None
    trainer = PolicyTrainer(
        trainer_model,
        config.optim,
        config.algorithm,
        config.rollout.temperature,
        pad_id=tokenizer.pad_token_id,
        reference_model=reference,
    )
    start = StartingPoint(trainer, engine_model)
    if checkpoint is not None:
        state, trainer_state = load_checkpoint_state(checkpoint)
        start.step, start.wall_s = state["step"], state.get("wall_s", 0.0)
        trainer.load_state_dict(trainer_state)
        restore_rng_state(trainer_state["rng"])
        mixture.load_state_dict(state["mixture"])
        start.pipeline_state = load_pipeline_state(checkpoint)
    return start
