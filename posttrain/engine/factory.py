"""The one place that builds an inference engine.

    engine_for_model(settings, model, tokenizer)   an engine (builtin, hf, vllm) over weights
                                                    already loaded; the [engine] settings
    build_engine(run_config, model, tokenizer)     the engine a run config asks for
    engine_for_spec("vllm:DIR")                    the engine a model spec names, its model and
                                                    tokenizer loaded (posttrain.models.spec)

It lives here, not in posttrain.models: it imports the engines, and models sits below them.
"""

from __future__ import annotations

from typing import NamedTuple

import torch

from posttrain.config import EngineConfig, RunConfig
from posttrain.errors import PosttrainError
from posttrain.models.loading import load_model, load_tokenizer, resolve_model_dir
from posttrain.models.spec import ModelSpec, parse_model_spec


class LoadedEngine(NamedTuple):
    engine: object
    tokenizer: object
    max_context_tokens: int | None  # the model's context window where known (None: the server's own)


def engine_for_model(settings: EngineConfig, model: torch.nn.Module, tokenizer, version: int = 0):
    if settings.speculative and settings.backend != "builtin":
        raise PosttrainError(f"[engine] speculative = true needs the builtin backend, not {settings.backend!r}")
    if settings.backend == "builtin":
        from posttrain.engine.builtin.engine import BuiltinEngine

        return BuiltinEngine(
            model,
            tokenizer,
            num_blocks=settings.num_blocks,
            block_size=settings.block_size,
            max_num_seqs=settings.max_num_seqs,
            max_num_batched_tokens=settings.max_num_batched_tokens,
            version=version,
            speculative=settings.speculative,
            kv_cache_dtype=settings.kv_cache_dtype,
        )
    if settings.backend == "hf":
        from posttrain.engine.hf_engine import HFEngine

        return HFEngine(model, tokenizer, max_batch_size=settings.max_batch_size, version=version)
    if settings.backend == "vllm":
        from posttrain.engine.vllm_engine import vllm_engine_over
        from posttrain.engine.vllm_install import require_vllm

        require_vllm("[engine] backend")
        return vllm_engine_over(
            model,
            tokenizer,
            version=version,
            max_model_len=settings.max_model_len,
            gpu_memory_utilization=settings.gpu_memory_utilization,
        )
    raise PosttrainError(f"engine backend {settings.backend!r} is not available")


def build_engine(config: RunConfig, model: torch.nn.Module, tokenizer, version: int = 0):
    """The run's engine ([engine]) over the engine's copy of the policy."""
    return engine_for_model(config.engine, model, tokenizer, version=version)


def engine_for_spec(
    spec: str | ModelSpec,
    api_key_env: str = "OPENAI_API_KEY",
    tokenizer_spec: str = "smollm2-135m",
    concurrency: int = 8,
    tokenizer=None,
    shared_tokenizer: str | None = None,
) -> LoadedEngine:
    """`tokenizer`: one already loaded for the spec's model (else it is loaded here). An openai
    spec sends chat messages and counts tokens locally with `tokenizer_spec`'s tokenizer; with
    `shared_tokenizer` (the server's own, e.g. smollm2-135m for `posttrain serve smollm2-135m`)
    it sends token-id prompts in that tokenizer instead, and the ids are exact."""
    spec = parse_model_spec(spec) if isinstance(spec, str) else spec
    if spec.backend == "openai":
        from posttrain.engine.openai_engine import OpenAIEngine

        tokenizer = tokenizer or load_tokenizer(shared_tokenizer or tokenizer_spec)
        return LoadedEngine(
            OpenAIEngine(
                spec.base_url,
                spec.model,
                api_key_env=api_key_env,
                tokenizer=tokenizer,
                max_concurrency=concurrency,
                prompt_format="token_ids" if shared_tokenizer else "chat",
                extra_body={"return_token_ids": True} if shared_tokenizer else None,
            ),
            tokenizer,
            None,
        )
    tokenizer = tokenizer or load_tokenizer(spec.model)
    if spec.backend == "vllm":
        from posttrain.engine.vllm_engine import VLLMEngine

        return LoadedEngine(VLLMEngine(str(resolve_model_dir(spec.model))), tokenizer, None)
    model = load_model(spec.model)
    limit = getattr(model.config, "max_position_embeddings", None)
    return LoadedEngine(engine_for_model(EngineConfig(backend=spec.backend), model, tokenizer), tokenizer, limit)
