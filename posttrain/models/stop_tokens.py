"""The token ids a model's generation stops at, found as transformers finds them.

`generate` stops at `generation_config.eos_token_id` (an id or a list), which `save_pretrained`
fills from the model config; a config saved without one (transformers' default `Qwen2Config()`,
`Qwen3Config()`) leaves it None, and then the tokenizer's eos token is the only stop a user
would expect. A missing value is skipped, never returned as None.
"""

from __future__ import annotations


def stop_token_ids(model, tokenizer) -> list[int]:
    """generation_config's eos ids, then the model config's, then the tokenizer's eos id: each
    once, in that order, None skipped. `model`: a loaded model, or only its config."""
    ids: list[int] = []
    config = getattr(model, "config", model)
    for source in (getattr(model, "generation_config", None), config):
        value = getattr(source, "eos_token_id", None) if source is not None else None
        if value is None:
            continue
        ids.extend(value if isinstance(value, (list, tuple)) else [value])
    if tokenizer is not None and tokenizer.eos_token_id is not None:
        ids.append(tokenizer.eos_token_id)
    return list(dict.fromkeys(int(i) for i in ids if i is not None))
