"""Every family the builtin engine supports, on a tiny randomly initialised model built from its
transformers config and saved to a directory (nothing downloaded): `posttrain engine verify`
finds the engine's greedy output identical to transformers' and its logprobs equal to the
trainer's; a training step on the engine's samples sees zero mismatch; any other family is
refused before loading."""

import copy
import json

import pytest
import torch
from transformers import (
    AutoModelForCausalLM,
    GemmaConfig,
    GPT2Config,
    LlamaConfig,
    MistralConfig,
    Qwen2Config,
    Qwen3Config,
)
from typer.testing import CliRunner

from posttrain.cli import app
from posttrain.config import AlgorithmConfig, OptimConfig
from posttrain.engine.builtin import onednn_linear
from posttrain.engine.builtin.engine import BuiltinEngine
from posttrain.engine.builtin.engine_kernels import use_engine_kernels
from posttrain.engine.builtin.model_families import SUPPORTED, UnsupportedModelError, attention_windows
from posttrain.engine.interface import GenerationRequest, SamplingParams
from posttrain.evaluate.engine_agreement import verify_engine
from posttrain.models.loading import load_model
from posttrain.models.stop_tokens import stop_token_ids
from posttrain.models.token_ids import chat_prompt_ids
from posttrain.pipeline.driver import train
from posttrain.train.samples import TrainSample
from posttrain.train.trainer import PolicyTrainer
from tests.conftest import expects_bit_equality, write_tiny_config

SHAPE = dict(
    vocab_size=49152,
    hidden_size=64,
    intermediate_size=128,
    num_hidden_layers=2,
    num_attention_heads=4,
    num_key_value_heads=2,
    max_position_embeddings=2048,
    bos_token_id=1,
    eos_token_id=2,
    pad_token_id=2,
    initializer_range=0.1,  # peaked logits: a wrong forward changes the greedy tokens, not only the logprobs
)
# windows shorter than the chat prompts (~40 tokens): the window is exercised in prefill and decode
CONFIGS = {
    "llama": lambda: LlamaConfig(**SHAPE, tie_word_embeddings=True),
    "qwen2": lambda: Qwen2Config(**SHAPE, tie_word_embeddings=True),
    "qwen2-sliding": lambda: Qwen2Config(
        **SHAPE, use_sliding_window=True, sliding_window=20, max_window_layers=1, tie_word_embeddings=True
    ),
    "qwen3": lambda: Qwen3Config(**SHAPE, head_dim=16, tie_word_embeddings=True),
    "mistral": lambda: MistralConfig(**SHAPE, sliding_window=24, tie_word_embeddings=False),
    "gemma": lambda: GemmaConfig(**SHAPE, head_dim=16),
}


def save_tiny(name: str, config, directory, tokenizer):
    """A tiny model of `config` in `directory/name`. Biases and per-head norm weights start at
    zero and one; they are drawn at random so that forgetting them changes the result."""
    torch.manual_seed(0)
    model = AutoModelForCausalLM.from_config(config)
    with torch.no_grad():
        for parameter_name, parameter in model.named_parameters():
            if parameter_name.endswith(".bias"):
                parameter.normal_(0, 0.3)
            elif "q_norm" in parameter_name or "k_norm" in parameter_name:
                parameter.normal_(1, 0.5)
    path = directory / name
    model.save_pretrained(path)
    tokenizer.save_pretrained(path)
    return path


@pytest.fixture(scope="module")
def family_dirs(tmp_path_factory, tokenizer):
    directory = tmp_path_factory.mktemp("families")
    return {name: save_tiny(name, make(), directory, tokenizer) for name, make in CONFIGS.items()}


def test_every_supported_family_has_a_tiny_model_here():
    assert {name.split("-")[0] for name in CONFIGS} == set(SUPPORTED)


def test_sliding_windows_follow_each_familys_config():
    assert attention_windows(MistralConfig(**SHAPE, sliding_window=24)) == [24, 24]
    assert attention_windows(Qwen2Config(**SHAPE)) == [None, None]  # use_sliding_window defaults to off
    sliding = CONFIGS["qwen2-sliding"]()
    assert attention_windows(sliding) == [None if t == "full_attention" else 20 for t in sliding.layer_types]
    assert set(attention_windows(sliding)) == {None, 20}  # one full and one windowed layer
    assert attention_windows(LlamaConfig(**SHAPE)) == [None, None]


@pytest.mark.parametrize("name", list(CONFIGS))
def test_verify_finds_greedy_identical_and_zero_logprob_mismatch(family_dirs, name):
    report = verify_engine(str(family_dirs[name]), max_tokens=12)
    assert report["supported"] and report["model_type"] == name.split("-")[0]
    assert report["greedy_identical"], report
    assert report["tokens_compared"] > report["prompts"]
    if expects_bit_equality(load_model(str(family_dirs[name]))):
        assert report["logprob_mismatch_max"] == 0.0, report
        assert report["concatenated_projections"] == onednn_linear.AVAILABLE  # and still to the bit
    else:
        assert report["logprob_mismatch_max"] < 1e-4, report


def test_verify_tells_a_wrong_forward_apart(family_dirs, monkeypatch):
    """The check is not blind: a runner that ignores Qwen3's per-head norms or Mistral's window
    (the silent wrong answers this issue is about) is caught."""
    from posttrain.engine.builtin import model_runner
    from posttrain.engine.builtin.model_families import Family

    monkeypatch.setattr(model_runner, "check_supported", lambda config: Family())
    monkeypatch.setattr(model_runner, "attention_windows", lambda config: [None] * config.num_hidden_layers)
    for name in ("qwen3", "mistral"):
        report = verify_engine(str(family_dirs[name]), max_tokens=12)
        assert not report["greedy_identical"] and report["logprob_mismatch_max"] > 1e-3, (name, report)


@pytest.mark.parametrize("name", list(CONFIGS))
def test_one_training_step_per_family_trains_on_the_engines_samples(family_dirs, tokenizer, name):
    model = load_model(str(family_dirs[name]))
    engine = BuiltinEngine(copy.deepcopy(model), tokenizer, num_blocks=128)
    prompt = chat_prompt_ids(tokenizer, [{"role": "user", "content": "Say something long about rivers."}])
    params = SamplingParams(n=4, temperature=0.9, max_tokens=10, seed=1)
    completions = engine.generate([GenerationRequest("p", prompt, params)])
    samples = [
        TrainSample(prompt, c.token_ids, c.logprobs, advantage)
        for c, advantage in zip(completions, [-1.5, -0.5, 0.5, 1.5])
    ]
    trainer_model = use_engine_kernels(copy.deepcopy(model))
    trainer = PolicyTrainer(trainer_model, OptimConfig(lr=1e-2), AlgorithmConfig(), 0.9, tokenizer.pad_token_id)
    before = {n: p.detach().clone() for n, p in trainer_model.named_parameters()}
    stats = trainer.step(samples)
    # the group's prompt ran once, except with sliding-window layers (a full forward)
    windowed = any(window is not None for window in attention_windows(model.config))
    assert (stats["prefix_tokens_shared"] > 0) == (not windowed)
    if expects_bit_equality(model):
        assert stats["logprob_mismatch_max"] == 0.0
    assert math_finite(stats["loss"]) and stats["grad_norm"] > 0
    changed = [n for n, p in trainer_model.named_parameters() if not torch.equal(p, before[n])]
    assert len(changed) == len(before)
    engine.update_weights(trainer_model.named_parameters(), version=1)
    again = engine.generate([GenerationRequest("p", prompt, params)])
    assert again[0].version == 1 and [c.logprobs for c in again] != [c.logprobs for c in completions]


def math_finite(value: float) -> bool:
    return value == value and abs(value) != float("inf")


def test_an_unsupported_family_is_refused_in_one_line_before_loading(tmp_path, tokenizer):
    path = save_tiny("gpt2", GPT2Config(n_layer=1, n_embd=32, n_head=2, vocab_size=49152), tmp_path, tokenizer)
    result = CliRunner().invoke(app, ["engine", "verify", str(path)])
    assert result.exit_code == 2
    report = json.loads(result.stdout)
    assert report["supported"] is False and report["model_type"] == "gpt2"
    errors = [line for line in result.stderr.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and "'gpt2'" in errors[0] and "llama, qwen2, qwen3, mistral, gemma" in errors[0]
    with pytest.raises(UnsupportedModelError, match="gpt2"):
        BuiltinEngine(AutoModelForCausalLM.from_pretrained(path), tokenizer, num_blocks=8)
    config = write_tiny_config(tmp_path, steps=1, checkpoint_every=1)
    config.write_text(config.read_text().replace('name = "tiny-llama"', f'name = "{path}"'))
    with pytest.raises(UnsupportedModelError, match="model_type 'gpt2'"):
        train(config, tmp_path / "run")
    assert not (tmp_path / "run").exists()  # refused before the run directory is written


def test_verify_command_prints_the_report(family_dirs):
    result = CliRunner().invoke(app, ["engine", "verify", f"hf:{family_dirs['qwen3']}", "--max-tokens", "4"])
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert {"model_type", "greedy_identical", "prompts", "logprob_mismatch_max", "supported"} <= set(report)
    assert report["model_type"] == "qwen3" and report["greedy_identical"] is True


NO_SPECIAL_TOKENS = {k: v for k, v in SHAPE.items() if k not in ("bos_token_id", "eos_token_id", "pad_token_id")}


@pytest.mark.parametrize("config_class", [Qwen2Config, Qwen3Config])
def test_a_config_without_eos_stops_at_the_tokenizers_eos(tmp_path, tokenizer, config_class):
    """transformers' default Qwen2Config() and Qwen3Config() have no eos_token_id: saved as they
    are, the stop tokens come from the tokenizer, and `engine verify` reports instead of failing."""
    config = config_class(**NO_SPECIAL_TOKENS, tie_word_embeddings=True)
    assert config.eos_token_id is None
    path = save_tiny(config.model_type, config, tmp_path, tokenizer)
    model = load_model(str(path))
    assert model.generation_config.eos_token_id is None and model.config.eos_token_id is None
    assert stop_token_ids(model, tokenizer) == [tokenizer.eos_token_id]
    result = CliRunner().invoke(app, ["engine", "verify", f"hf:{path}", "--max-tokens", "4"])
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert report["model_type"] == config.model_type and report["greedy_identical"] is True
