"""The policy trainer across processes: FSDP2 (`fully_shard`) shards parameters, gradients and
optimizer state over the ranks of a torch.distributed process group (gloo on CPU, NCCL on GPU).

Every rank is handed the whole batch and runs its share of it (`rank_shares`, balanced by
tokens); the micro-batch token budget holds per rank. The loss is normalized by the whole
batch's token (or sequence) count and the shards' gradients are summed, not averaged, so the
update is the single-process one up to the order of the float additions.

Invariants the collectives need (every rank must call them in the same order):
  * every rank runs the same number of forward and backward passes: a rank with fewer
    micro-batches runs padding ones (a two-token sample whose loss mask is all zero: it
    contributes nothing but takes part in the all-gathers and reduce-scatters);
  * the shared-prefix path is off (it runs two forward passes per micro-batch on some ranks and
    one on others).

The LM head is not run in chunks here ([optim] logprob_chunk_tokens): it belongs to the root unit,
whose parameters are gathered in the root module's own forward, which the chunked path bypasses.
"""

from __future__ import annotations

from collections.abc import Iterator

import torch
import torch.distributed as dist
from torch.distributed.device_mesh import init_device_mesh
from torch.distributed.fsdp import FSDPModule, fully_shard

from posttrain.train.microbatch import token_budget_microbatches
from posttrain.train.rank_shares import rank_shares
from posttrain.train.samples import TrainSample
from posttrain.train.trainer import PolicyTrainer, StepTotals


def shard_model(model: torch.nn.Module, device: torch.device | str = "cpu") -> torch.nn.Module:
    """FSDP2 in place, on `device` (the model is moved there first): each decoder layer is a unit
    (its parameters are gathered for its own forward and backward only), the rest (embeddings,
    final norm, head) the root unit. Gradients are summed over ranks (the loss is already
    normalized by the whole batch). The mesh is named, not FSDP's default (the machine's
    accelerator): a CPU trainer on a GPU machine shards on the CPU."""
    device = torch.device(device)
    model.to(device)
    mesh = init_device_mesh(device.type, (dist.get_world_size(),))
    for layer in model.model.layers:
        fully_shard(layer, mesh=mesh)
    fully_shard(model, mesh=mesh)
    for module in model.modules():
        if isinstance(module, FSDPModule):
            module.set_gradient_divide_factor(1.0)
            module.set_force_sum_reduction_for_comms(True)  # a plain SUM: gloo has no PREMUL_SUM
    return model


class ShardedPolicyTrainer(PolicyTrainer):
    def __init__(self, model: torch.nn.Module, *args, device: torch.device | str = "cpu", **kwargs) -> None:
        if not dist.is_initialized():
            raise RuntimeError("ShardedPolicyTrainer needs a torch.distributed process group")
        self.rank, self.world_size = dist.get_rank(), dist.get_world_size()
        super().__init__(shard_model(model, device), *args, device=device, **kwargs)
        self.share_prefixes = False
        self.logprob_chunk_tokens = 0

    def named_weights(self) -> Iterator[tuple[str, torch.Tensor]]:
        """Every parameter gathered from its shards, one at a time (the peak stays one parameter
        above the shard). A collective: every rank must iterate it to the end."""
        for name, param in self.model.named_parameters():
            yield name, param.full_tensor().detach()

    def loss_gradient(self, samples):
        raise NotImplementedError("gradient-conflict monitoring runs on one process (monitor.conflict_every)")

    def _plan(self, samples: list[TrainSample]) -> tuple[list[TrainSample], list[list[int]]]:
        lengths, budget = [s.length for s in samples], self.optim_cfg.micro_batch_tokens
        per_rank = [
            [[share[j] for j in mb] for mb in token_budget_microbatches([lengths[i] for i in share], budget)]
            for share in rank_shares(lengths, self.world_size)
        ]
        mine = per_rank[self.rank]
        padding = len(samples)  # the index of the padding sample, appended below
        mine += [[padding]] * (max(len(mbs) for mbs in per_rank) - len(mine))
        return [*samples, _padding_sample(self.pad_id)], mine

    def _combine_totals(self, totals: StepTotals) -> None:
        keys = sorted(totals.sums)
        # on the trainer's device: NCCL reduces only GPU tensors
        summed = torch.tensor([totals.loss, *(totals.sums[k] for k in keys)], dtype=torch.float64, device=self.device)
        dist.all_reduce(summed)
        largest = torch.tensor([totals.mismatch_max], dtype=torch.float64, device=self.device)
        dist.all_reduce(largest, op=dist.ReduceOp.MAX)
        totals.loss = float(summed[0])
        totals.sums = {k: float(v) for k, v in zip(keys, summed[1:])}
        totals.mismatch_max = float(largest[0])
        gathered: list[dict | None] = [None] * self.world_size
        dist.all_gather_object(gathered, totals.token_values)
        totals.token_values = {i: values for part in gathered for i, values in part.items()}


def _padding_sample(pad_id: int) -> TrainSample:
    return TrainSample([pad_id], [pad_id], [0.0], advantage=0.0, completion_mask=[0])
