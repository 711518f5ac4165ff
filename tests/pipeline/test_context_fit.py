"""`--check` refuses a context the model or the KV cache cannot hold, in one line naming the
config key and the number it would need."""

import json

import pytest

from posttrain.config import parse_config
from posttrain.errors import PosttrainError
from posttrain.pipeline.context_fit import EMBEDDED_POSITIONS, check_context_fits, model_positions
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


def test_a_model_directorys_positions_come_from_its_config_json(tmp_path):
    (tmp_path / "config.json").write_text(json.dumps({"model_type": "llama", "max_position_embeddings": 4096}))
    assert model_positions(str(tmp_path)) == 4096


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
    ],
)
def test_a_context_that_cannot_fit_is_refused_with_the_number_it_needs(settings, expected):
    config = _config(**settings)
    with pytest.raises(PosttrainError) as refused:
        check_context_fits(config, model_positions(config.model.name))
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
