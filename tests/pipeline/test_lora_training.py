"""LoRA runs ([model] lora): only the adapters train and are checkpointed, the engine gets the
merged weights after each step with the logprob gap still measured, and the checkpoint (the
adapters alone) loads for eval as its base model with the adapters merged."""

import copy
import json
import shutil
from pathlib import Path

import torch

from posttrain.config import parse_config
from posttrain.engine.builtin.engine import BuiltinEngine
from posttrain.engine.factory import engine_for_spec
from posttrain.engine.interface import GenerationRequest, SamplingParams
from posttrain.models.loading import load_model
from posttrain.models.token_ids import chat_prompt_ids
from posttrain.pipeline.build import load_policy_pair
from posttrain.pipeline.driver import train
from posttrain.train.logprobs import pad_right, token_logprobs
from posttrain.train.lora import trainable_parameter_count
from posttrain.train.samples import TrainSample
from posttrain.train.trainer import PolicyTrainer
from tests.conftest import TINY_CONFIG

LORA = 'lora = { r = 4, alpha = 8, target_modules = ["q_proj", "v_proj"] }\n'


def lora_config(directory: Path, steps: int = 2) -> Path:
    text = TINY_CONFIG.format(steps=steps, checkpoint_every=2).replace("seed = 3", "seed = 0")
    text = text.replace('name = "tiny-llama"\n', f'name = "tiny-llama"\n{LORA}')
    # a graded reward, so that groups differ and the adapters get a gradient at every step
    text = text.replace("heldout = 4\n", 'heldout = 4\nverifier = "python:user_rewards:length_reward"\n')
    shutil.copy(Path(__file__).parents[1] / "tasks" / "user_rewards.py", directory / "user_rewards.py")
    (directory / "lora.toml").write_text(text)
    return directory / "lora.toml"


def test_only_adapters_train_and_the_engine_gets_the_merged_weights(tmp_path, tokenizer):
    import tomllib

    config = parse_config(tomllib.loads(lora_config(tmp_path).read_text()))
    trainer_model, engine_model = load_policy_pair(config)
    trainable, total = trainable_parameter_count(trainer_model)
    assert 0 < trainable < total / 100
    engine = BuiltinEngine(engine_model, tokenizer, num_blocks=128)
    trainer = PolicyTrainer(trainer_model, config.optim, config.algorithm, 1.0, tokenizer.pad_token_id)
    frozen = {n: p.detach().clone() for n, p in trainer_model.named_parameters() if not p.requires_grad}
    prompt = chat_prompt_ids(tokenizer, [{"role": "user", "content": "Tell me about the sea."}])
    params = SamplingParams(n=4, temperature=1.0, max_tokens=8, seed=2)
    completions = engine.generate([GenerationRequest("p", prompt, params)])
    stats = trainer.step(
        [TrainSample(prompt, c.token_ids, c.logprobs, a) for c, a in zip(completions, [-1.5, -0.5, 0.5, 1.5])]
    )
    assert stats["grad_norm"] > 0 and stats["logprob_mismatch_max"] == 0.0  # B = 0: merged weights are W exactly
    assert all(torch.equal(p, frozen[n]) for n, p in trainer_model.named_parameters() if not p.requires_grad)
    weights = list(trainer.named_weights())
    assert sorted({name.split(".")[-2] for name, _ in weights}) == ["q_proj", "v_proj"] and len(weights) == 4
    engine.update_weights(weights, version=1)
    after = engine.generate([GenerationRequest("p", prompt, params)])
    ids, mask = pad_right([c.prompt_token_ids + c.token_ids for c in after], tokenizer.pad_token_id)
    with torch.no_grad():
        recomputed, _ = token_logprobs(trainer_model, ids, mask)
    gap = max(
        float(
            (recomputed[row, len(prompt) - 1 : len(prompt) - 1 + len(c.token_ids)] - torch.tensor(c.logprobs))
            .abs()
            .max()
        )
        for row, c in enumerate(after)
    )
    # W x + B A x in the trainer against (W + B A) x in the engine: float noise, measured, not zero
    assert gap < 1e-4
    assert [c.logprobs for c in after] != [c.logprobs for c in completions]


def test_a_lora_run_checkpoints_adapters_that_eval_loads(tmp_path):
    out = tmp_path / "run"
    train(lora_config(tmp_path), out)
    records = [json.loads(line) for line in (out / "metrics.jsonl").read_text().splitlines()]
    assert all(r["grad_norm"] > 0 for r in records)
    assert all(r["logprob_mismatch_max"] < 1e-4 for r in records)
    checkpoint = out / "checkpoints" / "step-2"
    assert (checkpoint / "adapter_model.safetensors").is_file() and not (checkpoint / "model.safetensors").exists()
    assert json.loads((checkpoint / "adapter_config.json").read_text())["base_model_name_or_path"] == "tiny-llama"
    assert (checkpoint / "adapter_model.safetensors").stat().st_size < 100_000  # the adapters, not the model
    merged = load_model(f"hf:{checkpoint}")
    base = load_model("tiny-llama", seed=0)
    changed = [n for n, p in merged.named_parameters() if not torch.equal(p, dict(base.named_parameters())[n])]
    assert changed and all(n.endswith(("q_proj.weight", "v_proj.weight")) for n in changed)
    loaded = engine_for_spec(f"hf:{checkpoint}")  # what `posttrain eval --model hf:DIR` builds
    prompt = chat_prompt_ids(loaded.tokenizer, [{"role": "user", "content": "2 + 2?"}])
    [completion] = loaded.engine.generate([GenerationRequest("p", prompt, SamplingParams(temperature=0, max_tokens=4))])
    reference = BuiltinEngine(copy.deepcopy(merged), loaded.tokenizer, num_blocks=64)
    [expected] = reference.generate([GenerationRequest("p", prompt, SamplingParams(temperature=0, max_tokens=4))])
    assert completion.token_ids == expected.token_ids
