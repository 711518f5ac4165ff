"""LoRA adapters (PEFT) on the trainer's model: only the adapters train and are checkpointed.

The engine runs a plain model; after each step it gets, for each adapted layer, the merged
weight W + (alpha / r) B A (`merged_lora_weights`), and nothing else: the other weights are
frozen and the engine already has them. Merging in the engine instead of applying the adapter
keeps the engine's forward pass (and its speed) unchanged. The trainer, though, computes
W x + B A x in two products, which rounds differently from (W + B A) x: the engine-trainer
logprob gap of a LoRA run is float noise (~1e-6), not 0.0, and `logprob_mismatch_max` reports it.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

import torch

if TYPE_CHECKING:  # annotations only: the trainer imports without pydantic (scripts/gpu_check.sh)
    from posttrain.config import LoraConfig


ADAPTER = "default"


def with_lora(model: torch.nn.Module, settings: LoraConfig, base_model: str) -> torch.nn.Module:
    """The model wrapped with fresh adapters (B = 0: the same function as before); `base_model`
    (a model name or directory) is written into the adapter config, so a checkpoint of the
    adapters alone loads (posttrain.models.loading)."""
    from peft import LoraConfig as PeftLoraConfig
    from peft import get_peft_model

    config = PeftLoraConfig(
        r=settings.r,
        lora_alpha=settings.alpha,
        lora_dropout=settings.dropout,
        target_modules=list(settings.target_modules),
        base_model_name_or_path=base_model,
        task_type="CAUSAL_LM",
    )
    model.name_or_path = base_model  # PEFT writes the model's own name over the config's
    try:
        return get_peft_model(model, config)
    except ValueError as exc:  # no layer matched target_modules
        raise ValueError(f"[model] lora: {exc}".splitlines()[0]) from exc


def load_lora(model: torch.nn.Module, adapter_dir) -> torch.nn.Module:
    """The model with a checkpoint's adapters, trainable (a resumed run)."""
    from peft import PeftModel

    return PeftModel.from_pretrained(model, str(adapter_dir), is_trainable=True)


def is_lora(model: torch.nn.Module) -> bool:
    if "peft" not in sys.modules:  # no PeftModel can exist yet, and importing peft takes ~1 s
        return False
    from peft import PeftModel

    return isinstance(model, PeftModel)


@torch.no_grad()
def merged_lora_weights(model: torch.nn.Module) -> list[tuple[str, torch.Tensor]]:
    """(name in the plain model, W + delta) for every adapted linear layer."""
    from peft.tuners.lora import LoraLayer

    merged = []
    for name, module in model.named_modules():
        if isinstance(module, LoraLayer) and ADAPTER in module.lora_A:
            weight = module.get_base_layer().weight
            plain = name.removeprefix("base_model.model.") + ".weight"
            merged.append((plain, weight + module.get_delta_weight(ADAPTER).to(weight.dtype)))
    return merged


def trainable_parameter_count(model: torch.nn.Module) -> tuple[int, int]:
    """(trainable, all) parameter counts."""
    trainable = sum(p.numel() for p in model.parameters() if p.requires_grad)
    return trainable, sum(p.numel() for p in model.parameters())
