"""A tiny random Llama in a folder, for the tests that run vLLM (which loads models from a folder).

tiny-llama itself (posttrain.models.loading) has a head size of 16, below what vLLM's CPU
attention takes; this one keeps its vocabulary and tokenizer (SmolLM2's) with 64-wide heads."""

from __future__ import annotations

from pathlib import Path

import torch
from transformers import LlamaConfig, LlamaForCausalLM

from posttrain.models.loading import load_tokenizer, tiny_llama_config


def save_tiny_llama(directory: Path, seed: int = 0) -> Path:
    """The folder, with the model's config, safetensors weights and tokenizer."""
    base = tiny_llama_config()
    config = LlamaConfig(
        vocab_size=base.vocab_size,
        hidden_size=128,
        intermediate_size=256,
        num_hidden_layers=2,
        num_attention_heads=2,
        num_key_value_heads=1,
        max_position_embeddings=base.max_position_embeddings,
        tie_word_embeddings=True,
        bos_token_id=base.bos_token_id,
        eos_token_id=base.eos_token_id,
        pad_token_id=base.pad_token_id,
    )
    with torch.random.fork_rng():
        torch.manual_seed(seed)
        model = LlamaForCausalLM(config)
    model.save_pretrained(directory)
    load_tokenizer("tiny-llama").save_pretrained(directory)
    return directory
