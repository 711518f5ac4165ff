"""Where a run starts: the trainer (policy, optimizer, reference model) and the engine's copy of
the policy, fresh or restored from the last checkpoint together with the data stream's position,
the RNG and the rollout side's saved state."""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

import torch

from posttrain.config import RunConfig
from posttrain.errors import PosttrainError
from posttrain.models.loading import load_model
from posttrain.pipeline.build import load_policy_pair, load_trainer_model, policy_spec, warn_if_bf16_is_emulated
from posttrain.tasks.domains import DomainMixture
from posttrain.train.checkpoint import (
    clean_partial_checkpoints,
    latest_checkpoint,
    load_checkpoint_state,
    load_pipeline_state,
    restore_rng_state,
)
from posttrain.train.device import resolve_device
from posttrain.train.sharded_checkpoint import has_shards, load_shards
from posttrain.train.trainer import PolicyTrainer
from posttrain.train.trainer_ranks import TrainerRanks, TrainerRecipe


@dataclass
class StartingPoint:
    trainer: PolicyTrainer | TrainerRanks  # TrainerRanks: train.world_size > 1, this is rank 0
    engine_model: torch.nn.Module | None  # a separate copy, synced after each step (None once vLLM holds it)
    step: int = 0  # the last step trained; 0 for a fresh run
    wall_s: float = 0.0  # wall time of the sessions before this one
    pipeline_state: dict[str, Any] | None = None  # the rollout dispatcher's, saved with the checkpoint


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
    reference_spec = str(initial_weights) if initial_weights else config.model.name
    device = resolve_device(config.train.device, config.engine.backend)
    if config.train.world_size > 1:
        trainer, engine_model = _trainer_ranks(config, checkpoint, initial_weights, reference_spec, tokenizer, device)
    else:
        trainer_model, engine_model = load_policy_pair(config, weights_from=checkpoint or initial_weights)
        reference = (
            load_model(reference_spec, "float32", seed=config.seed).eval() if config.algorithm.kl_coef > 0 else None
        )
        trainer = PolicyTrainer(
            trainer_model,
            config.optim,
            config.algorithm,
            config.rollout.temperature,
            pad_id=tokenizer.pad_token_id,
            reference_model=reference,
            device=device,
        )
    if config.engine.backend == "hf":  # the hf engine generates where the trainer runs (the builtin: CPU only)
        engine_model = engine_model.to(device)
    start = StartingPoint(trainer, engine_model)
    if checkpoint is not None:
        state, trainer_state = load_checkpoint_state(checkpoint)
        start.step, start.wall_s = state["step"], state.get("wall_s", 0.0)
        if trainer_state.get("sharded") and isinstance(trainer, PolicyTrainer):
            # written by several ranks, resumed by one: DCP reads the shards whole
            load_shards(checkpoint, trainer.model, trainer.optimizer)
            trainer.lr_schedule.load_state_dict(trainer_state["scheduler"])
        else:
            trainer.load_state_dict(trainer_state)
        restore_rng_state(trainer_state["rng"])
        mixture.load_state_dict(state["mixture"])
        start.pipeline_state = load_pipeline_state(checkpoint)
    return start


def _trainer_ranks(
    config: RunConfig,
    checkpoint: Path | None,
    initial_weights: Path | None,
    reference_spec: str,
    tokenizer,
    device: torch.device,
) -> tuple[TrainerRanks, torch.nn.Module]:
    """This process is rank 0 of `train.world_size` trainer ranks: start the sharded trainer on
    all of them (from the checkpoint's shards when resuming) and load the engine's copy here."""
    import torch.distributed as dist

    if not dist.is_initialized() or dist.get_world_size() != config.train.world_size:
        raise PosttrainError(
            f"train.world_size = {config.train.world_size} needs that many processes started by "
            f"torch.distributed.run: posttrain train CONFIG --out RUN_DIR --nproc {config.train.world_size}"
        )
    if checkpoint is not None and not has_shards(checkpoint):
        raise PosttrainError(
            f"{checkpoint}: written by a single-process trainer (no shards/); resume it with world_size 1 (--nproc 1)"
        )
    warn_if_bf16_is_emulated(config)
    spec = policy_spec(config, checkpoint or initial_weights)
    recipe = TrainerRecipe(
        partial(load_trainer_model, spec, config.seed, config.engine.backend),
        config.optim,
        config.algorithm,
        config.rollout.temperature,
        tokenizer.pad_token_id,
        partial(load_model, reference_spec, "float32", config.seed) if config.algorithm.kl_coef > 0 else None,
        shards_from=checkpoint,
        device=device.type,
    )
    return TrainerRanks.start(recipe), load_model(spec, config.model.dtype, seed=config.seed)
