"""Run by tests/train/test_sharded_training.py under torch.distributed.run: trains the tiny
Llama on two fixed batches across the launched ranks (FSDP2 on gloo), the driver's way
(rank 0 holds TrainerRanks, the others follow), writes a sharded checkpoint after the first
batch, and then resumes from that checkpoint in a second trainer. Rank 0 saves the losses and
the full weights to OUT/result-WORLD.pt."""

from __future__ import annotations

import sys
from functools import partial
from pathlib import Path

import torch
import torch.distributed as dist

from posttrain.config import AlgorithmConfig, OptimConfig
from posttrain.models.loading import load_model
from posttrain.train.process_group import join_process_group, leave_process_group
from posttrain.train.samples import TrainSample
from posttrain.train.trainer_ranks import TrainerRanks, TrainerRecipe, follow

OPTIM = OptimConfig(lr=1e-3, micro_batch_tokens=40)
ALGORITHM = AlgorithmConfig(clip_low=0.2, clip_high=0.28)


def batch(seed: int) -> list[TrainSample]:
    """Two groups sharing a prompt each, uneven lengths: the ranks run different micro-batch
    counts (and pad), and the split is not the micro-batching of one process."""
    generator = torch.Generator().manual_seed(seed)
    samples = []
    for group, (prompt_len, completion_lens) in enumerate([(7, [3, 9, 14, 5]), (11, [6, 2, 8])]):
        prompt = torch.randint(3, 1000, (prompt_len,), generator=generator).tolist()
        for k, n in enumerate(completion_lens):
            completion = torch.randint(3, 1000, (n,), generator=generator).tolist()
            logprobs = (-torch.rand(n, generator=generator) * 4 - 7).tolist()
            samples.append(TrainSample(prompt, completion, logprobs, advantage=(k - 1.5) * (group + 1) / 2))
    return samples


def recipe(shards_from: Path | None = None) -> TrainerRecipe:
    return TrainerRecipe(partial(load_model, "tiny-llama", "float32", 0), OPTIM, ALGORITHM, 1.0, 2, None, shards_from)


def main(out: Path) -> None:
    join_process_group()
    world, rank = dist.get_world_size(), dist.get_rank()
    losses = []
    if rank == 0:
        ranks = TrainerRanks.start(recipe())
        losses.append(ranks.step(batch(1))["loss"])
        ranks.write_files(out / f"step-1-{world}")
        losses.append(ranks.step(batch(2))["loss"])
        trained = {name: tensor.clone() for name, tensor in ranks.named_weights()}
        ranks.close()
    else:
        follow()
    resumed = recipe(out / f"step-1-{world}").build()
    resumed_loss = resumed.step(batch(2))["loss"]
    resumed_weights = {name: tensor.clone() for name, tensor in resumed.named_weights()}
    if rank == 0:
        torch.save(
            {"losses": losses, "trained": trained, "resumed_loss": resumed_loss, "resumed": resumed_weights},
            out / f"result-{world}.pt",
        )
    leave_process_group()


if __name__ == "__main__":
    main(Path(sys.argv[1]))
