"""A real checkpoint of a trained agent, written as a training run writes one: SmolLM2-135M's
weights and tokenizer in checkpoints/step-N/ through save_checkpoint, with the agent_settings.json
of the `[agent]` table it was trained with (eval and serve tests read it back)."""

import os
import shutil
from pathlib import Path

from posttrain.agent.loop import system_prompt
from posttrain.agent.trained_settings import AGENT_SETTINGS_FILE, TrainedAgentSettings
from posttrain.config import AgentConfig
from posttrain.models.loading import load_tokenizer
from posttrain.models.smollm2 import smollm2_dir
from posttrain.train.checkpoint import save_checkpoint

# a line the built prompt never holds: a prompt that has it is the saved one
SAVED_PROMPT_MARK = "Reply with one tool call and nothing else."
TRAINED_AGENT = AgentConfig(
    tools=["bash", "finish"], max_steps=2, reply_tokens=16, max_context_tokens=1024, scratch_notes=False
)


def trained_settings() -> TrainedAgentSettings:
    settings = TrainedAgentSettings.from_agent_config(TRAINED_AGENT)
    return settings.model_copy(update={"system_prompt": system_prompt(TRAINED_AGENT.tools) + "\n" + SAVED_PROMPT_MARK})


def _write_smollm2(directory: Path) -> None:
    """The weights as the trainer would write them (a hard link where it can: 500 MB)."""
    source = smollm2_dir()
    for name in ("config.json", "generation_config.json", "model.safetensors"):
        try:
            os.link(source / name, directory / name)
        except OSError:
            shutil.copy(source / name, directory / name)


def write_trained_agent_checkpoint(run: Path, settings: TrainedAgentSettings | None = None) -> Path:
    """RUN/checkpoints/step-1 holding SmolLM2 and `settings` (default: trained_settings())."""
    settings = settings or trained_settings()
    return save_checkpoint(
        run / "checkpoints",
        1,
        _write_smollm2,
        load_tokenizer("smollm2-135m"),
        {},
        {"policy_version": 1},
        keep=1,
        extra_files={AGENT_SETTINGS_FILE: settings.to_json()},
    )
