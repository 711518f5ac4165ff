"""A trainer spread over the ranks of a process group, driven from rank 0.

The RL driver stays a single controller: it runs on rank 0 with the rollouts, the engine and
the run directory, and holds a `TrainerRanks` where it would hold a `PolicyTrainer`. Every
call it makes is first broadcast to the other ranks, which sit in `follow()` doing the same
call on their shards:

    rank 0 (the driver)                          ranks 1..N-1
    ranks = TrainerRanks.start(recipe)           follow()          # build the same sharded trainer
    ranks.step(samples)                          trainer.step(samples)        (their share)
    engine.update_weights(ranks.named_weights()) iterate named_weights()      (the all-gathers)
    ranks.write_files(tmp)                       write their shards
    ranks.close()                                return

A follower never decides anything: it does what the next broadcast says, in order, so the
collectives of every rank line up.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import torch
import torch.distributed as dist

from posttrain.train.sharded_checkpoint import load_shards, save_full_model, save_shards
from posttrain.train.sharded_trainer import ShardedPolicyTrainer

if TYPE_CHECKING:  # annotations only: the trainer imports without pydantic (scripts/gpu_check.sh)
    from posttrain.config import AlgorithmConfig, OptimConfig


@dataclass
class TrainerRecipe:
    """What every rank builds its trainer from. The factories are module-level functions (or
    partials of them): they are pickled by reference to reach the other ranks."""

    model_factory: Callable[[], torch.nn.Module]
    optim: OptimConfig
    algorithm: AlgorithmConfig
    temperature: float
    pad_id: int
    reference_factory: Callable[[], torch.nn.Module] | None = None
    shards_from: Path | None = None  # a checkpoint directory to resume the model and optimizer from
    device: str = "cpu"  # the resolved [train] device (train/device.py), the same on every rank

    def build(self) -> ShardedPolicyTrainer:
        reference = self.reference_factory().eval() if self.reference_factory else None
        trainer = ShardedPolicyTrainer(
            self.model_factory(),
            self.optim,
            self.algorithm,
            self.temperature,
            self.pad_id,
            reference_model=reference,
            device=self.device,
        )
        if self.shards_from is not None:
            load_shards(self.shards_from, trainer.model, trainer.optimizer)
        return trainer


def _broadcast(message: tuple[str, Any]) -> None:
    dist.broadcast_object_list([message], src=0)


def _receive() -> tuple[str, Any]:
    box: list[Any] = [None]
    dist.broadcast_object_list(box, src=0)
    return box[0]


class TrainerRanks:
    """Rank 0's handle on the trainer of every rank: PolicyTrainer's interface to the driver."""

    def __init__(self, trainer: ShardedPolicyTrainer) -> None:
        self.trainer = trainer
        self.world_size = trainer.world_size

    @classmethod
    def start(cls, recipe: TrainerRecipe) -> TrainerRanks:
        _broadcast(("start", recipe))
        return cls(recipe.build())

    @property
    def last_token_values(self):
        return self.trainer.last_token_values

    def step(self, samples) -> dict[str, float]:
        _broadcast(("step", samples))
        stats = self.trainer.step(samples)
        stats["train_ranks"] = float(self.world_size)
        return stats

    def named_weights(self) -> Iterator[tuple[str, torch.Tensor]]:
        _broadcast(("weights", None))
        yield from self.trainer.named_weights()

    def loss_gradient(self, samples):
        return self.trainer.loss_gradient(samples)

    def state_dict(self) -> dict:
        """What rank 0 keeps in trainer_state.pt; the model and optimizer are in shards/."""
        return {"scheduler": self.trainer.lr_schedule.state_dict(), "sharded": True, "world_size": self.world_size}

    def load_state_dict(self, state: dict) -> None:
        self.trainer.lr_schedule.load_state_dict(state["scheduler"])

    def write_files(self, directory: Path) -> None:
        """The checkpoint's model files (full weights, by rank 0) and every rank's shards."""
        _broadcast(("write", directory))
        _write_files(self.trainer, directory)

    def close(self) -> None:
        """Let the other ranks go (once; the driver closes after its training loop)."""
        release_followers()


_released = False  # one stop per process group: the driver's close and the CLI's finally may both call


def release_followers() -> None:
    """Rank 0: tell the other ranks to return from `follow()`, unless already told. Called when
    a run ends, however it ends, so no follower waits for a command that never comes."""
    global _released
    if not _released:
        _released = True
        _broadcast(("stop", None))


def _write_files(trainer: ShardedPolicyTrainer, directory: Path) -> None:
    weights = trainer.named_weights()
    if trainer.rank == 0:
        save_full_model(directory, trainer.model, weights)
    else:
        for _ in weights:  # take part in the gathers
            pass
    save_shards(directory, trainer.model, trainer.optimizer)


def follow() -> None:
    """A rank other than 0: build the trainer the driver describes, then do what it says until
    it says stop."""
    command, recipe = _receive()
    if command == "stop":
        return
    if command != "start":
        raise RuntimeError(f"trainer rank {dist.get_rank()}: expected start, got {command!r}")
    trainer = recipe.build()
    while True:
        command, argument = _receive()
        if command == "step":
            trainer.step(argument)
        elif command == "weights":
            for _ in trainer.named_weights():
                pass
        elif command == "write":
            _write_files(trainer, argument)
        elif command == "stop":
            return
        else:
            raise RuntimeError(f"trainer rank {dist.get_rank()}: unknown command {command!r}")
