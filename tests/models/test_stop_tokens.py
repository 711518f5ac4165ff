"""The stop tokens of a model, as transformers' generate finds them (posttrain/models/stop_tokens.py).
A Qwen2/Qwen3 directory saved without eos_token_id, end to end: tests/engine/test_model_families.py."""

from transformers import AutoModelForCausalLM, LlamaConfig, Qwen2Config

from posttrain.models.stop_tokens import stop_token_ids

SHAPE = dict(vocab_size=512, hidden_size=32, intermediate_size=64, num_hidden_layers=1, num_attention_heads=2)


def test_stop_tokens_follow_generation_config_then_config_then_tokenizer(tokenizer):
    config = LlamaConfig(**SHAPE)
    config.eos_token_id = [7, 9]
    assert tokenizer.eos_token_id not in (7, 9)
    assert stop_token_ids(config, tokenizer) == [7, 9, tokenizer.eos_token_id]
    model = AutoModelForCausalLM.from_config(LlamaConfig(**SHAPE))
    model.config.eos_token_id = None  # LlamaConfig's default is 2
    model.generation_config.eos_token_id = 5
    assert stop_token_ids(model, tokenizer) == [5, tokenizer.eos_token_id]
    assert stop_token_ids(model, None) == [5]


def test_a_qwen2_default_config_has_no_eos_and_the_tokenizers_is_used(tokenizer):
    config = Qwen2Config(**SHAPE)
    assert config.eos_token_id is None
    assert stop_token_ids(config, tokenizer) == [tokenizer.eos_token_id]
    assert stop_token_ids(config, None) == []  # nothing to stop at: no None in the list
