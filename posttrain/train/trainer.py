"""The policy trainer: one optimizer step on a batch of rollouts.

It trains on exactly the engine's token ids and reports how far its recomputed logprobs are
from the engine's (`logprob_mismatch_max`), the number that tells a user whether rollouts and
training agree.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import torch

from posttrain.observe.resident_memory import release_freed_heap
from posttrain.rl import aggregate, gspo_loss, kl_penalty, nll_loss, ppo_clip_loss, truncated_importance_weights
from posttrain.train.logprobs import pad_right, token_logprobs
from posttrain.train.lora import is_lora, merged_lora_weights
from posttrain.train.microbatch import shared_prompt_microbatches, token_budget_microbatches
from posttrain.train.samples import TrainSample
from posttrain.train.shared_prefix import shareable_prefix_length, shares_prefixes

if TYPE_CHECKING:  # annotations only: the trainer imports without pydantic (scripts/gpu_check.sh)
    from posttrain.config import AlgorithmConfig, OptimConfig


class PolicyTrainer:
    def __init__(
        self,
        model: torch.nn.Module,
        optim: OptimConfig,
        algorithm: AlgorithmConfig,
        temperature: float,
        pad_id: int,
        reference_model: torch.nn.Module | None = None,
        device: torch.device | str = "cpu",
    ) -> None:
        # the model, its optimizer state (made beside the parameters), every batch tensor and the
        # loss live here: train/device.py resolves [train] device
        self.device = torch.device(device)
        self.model = model.to(self.device)
        self.optim_cfg = optim
        self.algo = algorithm
        self.temperature = temperature
        self.pad_id = pad_id
        self.reference_model = reference_model.to(self.device) if reference_model is not None else None
        self.last_token_values: list[tuple[list[float], list[float] | None] | None] = []  # see step()
        if algorithm.kl_coef > 0 and reference_model is None:
            raise ValueError("kl_coef > 0 needs a reference model")
        self.model.config.use_cache = False
        # checkpointed layers drop the cache the suffixes would attend to
        self.share_prefixes = (
            optim.shared_prefix and not optim.activation_checkpointing and shares_prefixes(model.config)
        )
        self.logprob_chunk_tokens = optim.logprob_chunk_tokens
        # after each step the freed activations' heap pages go back to the OS (resident_memory.py)
        self.trim_heap = True
        if optim.activation_checkpointing:
            self.model.gradient_checkpointing_enable(gradient_checkpointing_kwargs={"use_reentrant": False})
        self.model.train()
        self.optimizer = torch.optim.AdamW(
            [p for p in model.parameters() if p.requires_grad],
            lr=optim.lr,
            betas=optim.betas,
            weight_decay=optim.weight_decay,
        )
        self.lr_schedule = torch.optim.lr_scheduler.LambdaLR(
            self.optimizer, lambda step: min(1.0, (step + 1) / (optim.warmup_steps + 1))
        )

    def state_dict(self) -> dict:
        # "scheduler": the key checkpoints have always used for the learning-rate schedule
        return {"optimizer": self.optimizer.state_dict(), "scheduler": self.lr_schedule.state_dict()}

    def load_state_dict(self, state: dict) -> None:
        self.optimizer.load_state_dict(state["optimizer"])
        self.lr_schedule.load_state_dict(state["scheduler"])

    def step(self, samples: list[TrainSample]) -> dict[str, float]:
        """One optimizer step (or `updates_per_batch` PPO epochs) over all samples. Afterwards
        `last_token_values[i]` holds sample i's (logprobs, entropies) of its completion tokens
        under the weights before the update: the trainer's side of `logprob_mismatch_max`, which
        the trajectory store keeps beside the engine's logprobs."""
        started = time.perf_counter()
        batch = self._prepare(samples)
        stats: dict[str, float] = {}
        for epoch in range(self.algo.updates_per_batch):
            totals = self._accumulate_gradients(batch, first_epoch=epoch == 0)
            grad_norm = torch.nn.utils.clip_grad_norm_(self.model.parameters(), self.optim_cfg.grad_clip)
            self.optimizer.step()
            self.lr_schedule.step()
            if epoch == 0:
                self._combine_totals(totals)
                stats = totals.summary(batch.n_tokens)
                self.last_token_values = [totals.token_values.get(i) for i in range(len(samples))]
            # a sharded model's norm is a replicated DTensor
            stats["grad_norm"] = float(grad_norm.full_tensor() if hasattr(grad_norm, "full_tensor") else grad_norm)
        stats["lr"] = self.lr_schedule.get_last_lr()[0]
        stats["train_tokens"] = float(sum(s.length for s in samples))
        # tokens each forward and backward pass did not run: a shared prefix once per micro-batch
        stats["prefix_tokens_shared"] = float(
            sum((len(mb) - 1) * p for mb, p in zip(batch.microbatches, batch.prefixes))
        )
        if self.trim_heap:
            release_freed_heap()
        stats["train_time_s"] = time.perf_counter() - started
        return stats

    def loss_gradient(self, samples: list[TrainSample]) -> dict[str, torch.Tensor]:
        """The gradient of the loss `step()` optimizes over `samples` (its first update, before
        clipping), by parameter name, for the parameters that require grad: detached fp32 copies,
        zeros for a parameter the loss does not reach. Nothing is updated: parameters, optimizer and
        learning-rate schedule are left as they were, and `.grad` is cleared (to None), so the next
        `step()` is unaffected."""
        self._accumulate_gradients(self._prepare(samples), first_epoch=True)
        gradients = {
            name: _fp32_copy(param.grad) if param.grad is not None else torch.zeros_like(param, dtype=torch.float32)
            for name, param in self.model.named_parameters()
            if param.requires_grad
        }
        self.optimizer.zero_grad(set_to_none=True)
        return gradients

    def close(self) -> None:
        """Nothing to let go on one process (TrainerRanks releases the other ranks)."""

    def write_files(self, directory: Path) -> None:
        """The model's Hugging Face files, for a checkpoint; with LoRA the adapters alone (PEFT's
        "auto" check of the embeddings would look the base model up online: off)."""
        extra = {"save_embedding_layers": False} if is_lora(self.model) else {}
        self.model.save_pretrained(directory, safe_serialization=True, **extra)

    def named_weights(self):
        """(name, full tensor) pairs for the engine's weight sync: every parameter, or with LoRA
        the adapted layers' merged weights W + (alpha / r) B A (lora.py)."""
        return merged_lora_weights(self.model) if is_lora(self.model) else self.model.named_parameters()

    def _prepare(self, samples: list[TrainSample]) -> _Batch:
        # the normalizer counts the whole batch: a sharded rank runs only its share of it
        n_tokens = sum(s.trained_tokens for s in samples)
        normalizer = float(n_tokens if self.algo.aggregation == "token_mean" else len(samples))
        if self.algo.loss == "gspo":  # GSPO averages per sequence by definition
            normalizer = float(len(samples))
        samples, microbatches = self._plan(samples)
        prefixes = [self._prefix_length(samples, mb) for mb in microbatches]
        old_logprobs = None
        if self.algo.updates_per_batch > 1:
            old_logprobs = self._all_logprobs(samples, microbatches, prefixes, self.model)
        reference = None
        if self.algo.kl_coef > 0:
            reference = self._all_logprobs(samples, microbatches, prefixes, self.reference_model)
        return _Batch(samples, microbatches, prefixes, n_tokens, normalizer, old_logprobs, reference)

    def _plan(self, samples: list[TrainSample]) -> tuple[list[TrainSample], list[list[int]]]:
        """The samples this trainer runs and its micro-batches of their indices: all of them here;
        a sharded trainer's share, plus padding (see ShardedPolicyTrainer)."""
        return samples, self._microbatches(samples)

    def _combine_totals(self, totals: StepTotals) -> None:
        """Make the first update's statistics the whole batch's: nothing to do on one process."""

    def _accumulate_gradients(self, batch: _Batch, first_epoch: bool) -> StepTotals:
        """Clears `.grad`, then backpropagates the loss micro-batch by micro-batch into it."""
        self.optimizer.zero_grad(set_to_none=True)
        totals = StepTotals()
        for mb, prefix in zip(batch.microbatches, batch.prefixes):
            self._microbatch(
                batch.samples, mb, prefix, batch.normalizer, batch.old_logprobs, batch.reference, totals, first_epoch
            )
        return totals

    def _batch_tensors(self, samples: list[TrainSample], indices: list[int]):
        sequences = [samples[i].prompt_ids + samples[i].completion_ids for i in indices]
        ids, mask = pad_right(sequences, self.pad_id, self.device)
        # loss_mask[:, t] marks logprob positions that predict completion tokens; engine holds the
        # engine's logprobs there. Rows are built as lists and made tensors on the device at once.
        width = ids.shape[1] - 1
        loss_rows, engine_rows = [], []
        for i in indices:
            sample = samples[i]
            start, n = len(sample.prompt_ids) - 1, len(sample.completion_ids)
            own = sample.completion_mask if sample.completion_mask is not None else [1] * n
            loss_rows.append([0.0] * start + [float(m) for m in own] + [0.0] * (width - start - n))
            engine_rows.append([0.0] * start + list(sample.engine_logprobs) + [0.0] * (width - start - n))
        loss_mask = torch.tensor(loss_rows, dtype=torch.float32, device=self.device)
        engine = torch.tensor(engine_rows, dtype=torch.float32, device=self.device) * loss_mask
        return ids, mask, loss_mask, engine

    def _microbatches(self, samples: list[TrainSample]) -> list[list[int]]:
        lengths, budget = [s.length for s in samples], self.optim_cfg.micro_batch_tokens
        if self.share_prefixes:
            return shared_prompt_microbatches([s.prompt_ids for s in samples], lengths, budget)
        return token_budget_microbatches(lengths, budget)

    def _prefix_length(self, samples: list[TrainSample], indices: list[int]) -> int:
        if not self.share_prefixes:
            return 0
        sequences = [samples[i].prompt_ids + samples[i].completion_ids for i in indices]
        return shareable_prefix_length(sequences, _first_completion_position(samples, indices))

    def _token_logprobs(self, model, samples, indices, prefix, ids, mask, with_entropy: bool):
        return token_logprobs(
            model,
            ids,
            mask,
            self.temperature,
            self.optim_cfg.bf16_autocast,
            with_entropy=with_entropy,
            first_position=_first_completion_position(samples, indices),
            prefix_length=prefix,
            chunk_tokens=self.logprob_chunk_tokens,
        )

    def _all_logprobs(self, samples, microbatches, prefixes, model) -> dict[int, torch.Tensor]:
        """Each sample's logprobs under `model`, without gradients, by sample index."""
        by_index = {}
        for indices, prefix in zip(microbatches, prefixes):
            ids, mask, _, _ = self._batch_tensors(samples, indices)
            with torch.no_grad():
                logprobs, _ = self._token_logprobs(model, samples, indices, prefix, ids, mask, with_entropy=False)
            by_index.update(zip(indices, logprobs))
        return by_index

    def _microbatch(
        self, samples, indices, prefix, normalizer, old_logprobs, reference, totals, first_epoch: bool
    ) -> None:
        ids, mask, loss_mask, engine_lp = self._batch_tensors(samples, indices)
        logprobs, entropy = self._token_logprobs(self.model, samples, indices, prefix, ids, mask, first_epoch)
        old = torch.stack([old_logprobs[i] for i in indices]) if old_logprobs else logprobs.detach()
        advantages = torch.tensor([samples[i].advantage for i in indices], dtype=torch.float32, device=self.device)
        weights = None
        if self.algo.tis_cap is not None:
            weights = truncated_importance_weights(old, engine_lp, self.algo.tis_cap) * loss_mask
        if self.algo.loss == "nll":
            loss, loss_stats = nll_loss(logprobs, loss_mask, self.algo.aggregation, normalizer)
        elif self.algo.loss == "gspo":
            loss, loss_stats = gspo_loss(
                logprobs, old, advantages, loss_mask, normalizer=normalizer, token_weights=weights
            )
        else:
            loss, loss_stats = ppo_clip_loss(
                logprobs,
                old,
                advantages,
                loss_mask,
                clip_low=self.algo.clip_low,
                clip_high=self.algo.clip_high,
                aggregation=self.algo.aggregation,
                normalizer=normalizer,
                token_weights=weights,
            )
        kl_value = 0.0
        if reference is not None:
            ref = torch.stack([reference[i] for i in indices])
            kl = kl_penalty(logprobs, ref, self.algo.kl_estimator)
            mode = "seq_mean" if self.algo.loss == "gspo" else self.algo.aggregation
            loss = loss + self.algo.kl_coef * aggregate(kl, loss_mask, mode, normalizer)
            kl_value = float((kl.detach() * loss_mask).sum())
        loss.backward()
        if first_epoch:
            for row, i in enumerate(indices):
                start, n = len(samples[i].prompt_ids) - 1, len(samples[i].completion_ids)
                totals.token_values[i] = (
                    logprobs[row, start : start + n].detach().tolist(),
                    entropy[row, start : start + n].detach().tolist() if entropy is not None else None,
                )
            diff = (logprobs.detach() - engine_lp).abs() * loss_mask
            totals.add(
                loss=float(loss.detach()),
                mismatch_max=float(diff.max()),
                mismatch_sum=float(diff.sum()),
                entropy_sum=float((entropy * loss_mask).sum()) if entropy is not None else 0.0,
                kl_sum=kl_value,
                clip_tokens=loss_stats.get("clip_fraction", 0.0) * float(loss_mask.sum()),
                nll_sum=loss_stats["nll"] * float(loss_mask.sum()) if "nll" in loss_stats else 0.0,
                tis_sum=float(weights.sum()) if weights is not None else float(loss_mask.sum()),
            )


@dataclass
class _Batch:
    """What every update over one batch shares: its micro-batches and the loss's fixed inputs."""

    samples: list[TrainSample]
    microbatches: list[list[int]]
    prefixes: list[int]
    n_tokens: int
    normalizer: float
    old_logprobs: dict[int, torch.Tensor] | None  # by sample index; None: the current logprobs, detached
    reference: dict[int, torch.Tensor] | None  # the reference model's, for the KL term


def _fp32_copy(tensor: torch.Tensor) -> torch.Tensor:
    return tensor.detach().to(torch.float32, copy=True)


def _first_completion_position(samples: list[TrainSample], indices: list[int]) -> int:
    """The first logprob position that predicts a completion token in this micro-batch."""
    return min(len(samples[i].prompt_ids) for i in indices) - 1


class StepTotals:
    """The first update's running sums over micro-batches, for its statistics."""

    def __init__(self) -> None:
        self.loss = 0.0
        self.mismatch_max = 0.0
        self.token_values: dict[int, tuple[list[float], list[float] | None]] = {}  # by sample index
        self.sums = {
            "mismatch_sum": 0.0,
            "entropy_sum": 0.0,
            "kl_sum": 0.0,
            "clip_tokens": 0.0,
            "tis_sum": 0.0,
            "nll_sum": 0.0,
        }

    def add(self, loss: float, mismatch_max: float, **sums: float) -> None:
        self.loss += loss
        self.mismatch_max = max(self.mismatch_max, mismatch_max)
        for key, value in sums.items():
            self.sums[key] += value

    def summary(self, n_tokens: int) -> dict[str, float]:
        n = max(n_tokens, 1)
        return {
            "loss": self.loss,
            "logprob_mismatch_max": self.mismatch_max,
            "logprob_mismatch_mean": self.sums["mismatch_sum"] / n,
            "entropy": self.sums["entropy_sum"] / n,
            "kl": self.sums["kl_sum"] / n,
            "clip_fraction": self.sums["clip_tokens"] / n,
            "tis_weight_mean": self.sums["tis_sum"] / n,
            "nll": self.sums["nll_sum"] / n,
        }


def finite_or_raise(stats: dict[str, float]) -> None:
    bad = [k for k, v in stats.items() if isinstance(v, float) and not math.isfinite(v)]
    if bad:
        raise FloatingPointError(f"non-finite training statistics: {', '.join(bad)}")
