"""Model specs: which model, on which inference backend, in one string.

    smollm2-135m | tiny-llama      the embedded models, on the builtin engine
    hf:DIR                          a Hugging Face checkpoint on transformers generation
    builtin:DIR                     a Hugging Face checkpoint of a family the builtin engine implements
                                    (llama, qwen2, qwen3, mistral, gemma: engine/builtin/model_families.py)
    vllm:DIR                        a checkpoint on vLLM (when installed)
    openai:BASE_URL#MODEL           any OpenAI-compatible server; the key from $OPENAI_API_KEY
                                    (or the variable named by --api-key-env)

DIR may also be an embedded model's name. `posttrain.engine.factory.engine_for_spec` builds the
engine a spec names.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from posttrain.errors import ModelLoadError, PosttrainError

EMBEDDED = ("smollm2-135m", "tiny-llama")
ADAPTER_CONFIG = "adapter_config.json"
_LOCAL_BACKENDS = ("hf", "builtin", "vllm")


class ModelSpecError(PosttrainError):
    pass


@dataclass(frozen=True)
class ModelSpec:
    backend: str  # builtin, hf, vllm or openai
    model: str  # a model name or directory (posttrain.models.loading); for openai, the served model's name
    base_url: str | None = None  # openai only

    def __post_init__(self) -> None:
        if self.backend == "vllm" and self.model == "tiny-llama":
            raise ModelSpecError("tiny-llama is built in memory; vLLM loads models from a directory")


def parse_model_spec(spec: str) -> ModelSpec:
    if spec.startswith("openai:"):
        base_url, _, model = spec.removeprefix("openai:").partition("#")
        if not base_url or not model:
            raise ModelSpecError(f"model spec {spec!r}: expected openai:BASE_URL#MODEL")
        return ModelSpec("openai", model, base_url)
    backend, _, path = spec.partition(":")
    if backend not in _LOCAL_BACKENDS:
        return ModelSpec("builtin", spec)
    if not path:
        raise ModelSpecError(f"model spec {spec!r}: expected {backend}:DIR")
    return ModelSpec(backend, path)


def local_model_dir(name: str) -> Path | None:
    """The directory a model name (`[model] name`, or the DIR of a spec) points to, checked
    without loading anything: None for an embedded model, whose directory is made on first use.
    Raises ModelLoadError naming the model when the directory holds no config.json."""
    if name in EMBEDDED:
        return None
    path = Path(name.removeprefix("hf:")).expanduser()
    if not (path / "config.json").is_file() and not (path / "adapter_config.json").is_file():
        raise ModelLoadError(
            f"model {name!r}: no config.json (or adapter_config.json) in {path}; give a Hugging Face model "
            "directory, a LoRA adapter directory, "
            f"{' or '.join(repr(e) for e in EMBEDDED)}"
        )
    return path


def is_adapter_dir(path) -> bool:
    """A directory of LoRA adapters (PEFT's adapter_config.json) rather than a whole model."""
    return (Path(path) / ADAPTER_CONFIG).is_file() and not (Path(path) / "config.json").is_file()


def adapter_base_model(directory: Path) -> str:
    """The model an adapter directory was trained on (its adapter_config.json)."""
    try:
        base = json.loads((directory / ADAPTER_CONFIG).read_text()).get("base_model_name_or_path")
    except json.JSONDecodeError as exc:
        raise ModelLoadError(f"{directory / ADAPTER_CONFIG}: not valid JSON ({exc.msg})") from exc
    if not base:
        raise ModelLoadError(f"{directory / ADAPTER_CONFIG}: no base_model_name_or_path: which model do they adapt?")
    return base
