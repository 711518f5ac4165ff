"""`--check` refuses a context the model or the KV cache cannot hold, in one line naming the
config key and the number it would need."""

import json

import pytest

from posttrain.config import parse_config
from posttrain.errors import PosttrainError
from posttrain.pipeline.context_fit import (
    EMBEDDED_KV_SHAPES,
    EMBEDDED_POSITIONS,
    check_context_fits,
    model_kv_shape,
    model_positions,
)
from tests.cli.test_cli_errors import GOOD, one_error_line, run_cli

TERMINAL = {"name": "t", "kind": "terminal", "source": "terminal-gen:all"}


def _config(agent=None, engine=None, rollout=None, terminal=True, model="smollm2-135m"):
    domain = TERMINAL if terminal else {"name": "a", "source": "reasoning-gym:basic_arithmetic"}
    data = {"model": {"name": model}, "domains": [domain]}
    for key, table in (("agent", agent), ("engine", engine), ("rollout", rollout)):
        if table:
            data[key] = table
    return parse_config(data)


def test_the_embedded_smollm2s_positions_are_its_configs():
    from posttrain.models.smollm2 import smollm2_dir

    config = json.loads((smollm2_dir() / "config.json").read_text())
    assert EMBEDDED_POSITIONS["smollm2-135m"] == config["max_position_embeddings"] == 8192
    assert model_positions("smollm2-135m") == 8192 and model_positions("tiny-llama") is None
    shape = (config["num_hidden_layers"], config["num_key_value_heads"], 576 // config["num_attention_heads"])
    assert EMBEDDED_KV_SHAPES["smollm2-135m"] == model_kv_shape("smollm2-135m") == shape == (30, 3, 64)


def test_the_tiny_models_kv_shape_is_its_configs():
    from posttrain.models.loading import load_model

    config = load_model("tiny-llama", seed=0).config
    head_dim = config.hidden_size // config.num_attention_heads
    assert model_kv_shape("tiny-llama") == (config.num_hidden_layers, config.num_key_value_heads, head_dim)


def test_a_model_directorys_positions_come_from_its_config_json(tmp_path):
    config = {"model_type": "llama", "max_position_embeddings": 4096, "num_hidden_layers": 4}
    config |= {"num_attention_heads": 8, "num_key_value_heads": 2, "hidden_size": 256}
    (tmp_path / "config.json").write_text(json.dumps(config))
    assert model_positions(str(tmp_path)) == 4096 and model_kv_shape(str(tmp_path)) == (4, 2, 32)


@pytest.mark.parametrize(
    "settings, expected",
    [
        (
            {"agent": {"max_context_tokens": 16384}},
            "[agent] max_context_tokens = 16384 is more than smollm2-135m's max_position_embeddings (8192): "
            "set max_context_tokens <= 8192",
        ),
        (
            {"agent": {"max_context_tokens": 8192}, "engine": {"num_blocks": 100, "block_size": 16}},
            "[engine] num_blocks = 100 holds 1600 tokens, less than one episode's [agent] max_context_tokens = 8192: "
            "it needs num_blocks >= 512",
        ),
        (
            {"agent": {"max_context_tokens": 1024, "reply_tokens": 1024}},
            "[agent] reply_tokens = 1024 leaves no room for a prompt in max_context_tokens = 1024",
        ),
        (
            {"rollout": {"max_new_tokens": 9000}, "terminal": False},
            "[rollout] max_new_tokens = 9000 leaves no room for a prompt in smollm2-135m's max_position_embeddings "
            "(8192)",
        ),
        (
            {"rollout": {"max_new_tokens": 100}, "engine": {"num_blocks": 4}, "terminal": False, "model": "tiny-llama"},
            "[engine] num_blocks = 4 holds 64 tokens, less than [rollout] max_new_tokens = 100 plus a prompt: "
            "it needs num_blocks >= 7",
        ),
        (  # what the needed cache costs: 512 blocks of 16 tokens at 2 x 30 x 3 x (64 + 4) bytes a token
            {"agent": {"max_context_tokens": 8192}, "engine": {"num_blocks": 100, "kv_cache_dtype": "int8"}},
            "it needs num_blocks >= 512 (95.6 MiB of int8 KV cache at 12240 bytes a token)",
        ),
        (
            {"agent": {"max_context_tokens": 8192}, "engine": {"num_blocks": 100}},
            "it needs num_blocks >= 512 (360.0 MiB of fp32 KV cache at 46080 bytes a token)",
        ),
    ],
)
def test_a_context_that_cannot_fit_is_refused_with_the_number_it_needs(settings, expected):
    config = _config(**settings)
    with pytest.raises(PosttrainError) as refused:
        check_context_fits(config, model_positions(config.model.name), model_kv_shape(config.model.name))
    assert expected in str(refused.value)
    assert "\n" not in str(refused.value)


def test_what_fits_passes():
    check_context_fits(_config(agent={"max_context_tokens": 8192, "max_steps": 20}), 8192)
    check_context_fits(_config(rollout={"max_new_tokens": 8000}, terminal=False), 8192)
    check_context_fits(_config(agent={"max_context_tokens": 16384}, model="tiny-llama"), None)


def test_check_refuses_before_loading_anything(tmp_path):
    config = tmp_path / "long.toml"
    config.write_text(GOOD.replace("tiny-llama", "smollm2-135m") + "[rollout]\nmax_new_tokens = 9000\n")
    line = one_error_line(run_cli("train", str(config), "--check"))
    assert "[rollout] max_new_tokens = 9000 leaves no room for a prompt" in line and "8192" in line
