"""Load a model, build its engine in the asked variant, and serve it with uvicorn.

standard   the builtin engine: paged KV cache, prefix cache, continuous batching
fast       the same engine with speculative decoding (n-gram drafts verified by the model):
           greedy output equal token for token, sampling from the same distribution;
           optionally with int8 weights (quantize="int8": faster, lossy)
"""

from __future__ import annotations

from dataclasses import dataclass

from posttrain.engine.builtin.engine import BuiltinEngine
from posttrain.engine.builtin.quantization import CHOICES as QUANTIZE_CHOICES
from posttrain.engine.builtin.quantization import quantize_int8
from posttrain.errors import PosttrainError
from posttrain.models.loading import load_model, load_tokenizer
from posttrain.serve.app import ServedModel, create_app
from posttrain.serve.engine_worker import EngineWorker
from posttrain.serve.metrics import ServerMetrics

VARIANTS = ("standard", "fast")


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
    model_name = settings.model.removeprefix("builtin:")
    tokenizer = load_tokenizer(model_name)
    model = load_model(model_name)
    if settings.quantize:
        quantize_int8(model)
    context = getattr(model.config, "max_position_embeddings", None) or 2048
    max_model_len = min(settings.max_model_len or context, context)
    engine = BuiltinEngine(
        model,
        tokenizer,
        num_blocks=settings.num_blocks,
        max_num_seqs=max(settings.max_concurrency * 4, 16),
        speculative=settings.variant == "fast",
    )
    metrics = ServerMetrics()
    worker = EngineWorker(engine, metrics, settings.max_concurrency, settings.max_queue, settings.request_timeout_s)
    metrics.gauges.update(
        {
            "queue_length": lambda: worker.queue_length,
            "running_requests": lambda: worker.running,
            "prefix_cache_hit_rate": lambda: engine.prefix_hit_rate,
            "speculative_acceptance_rate": lambda: engine.stats.acceptance_rate,
            "speculative_draft_tokens": lambda: engine.stats.draft_tokens,
        }
    )
    served = ServedModel(
        settings.served_model_name or settings.model, engine, tokenizer, max_model_len, settings.variant
    )
    return create_app(served, worker, metrics), worker, metrics


def serve(built, host: str = "127.0.0.1", port: int = 8000, log_level: str = "warning") -> None:
    """Run a build_server() result until interrupted."""
    import uvicorn

    app, worker, _ = built
    worker.start()
    try:
        uvicorn.run(app, host=host, port=port, log_level=log_level, timeout_graceful_shutdown=5)
    finally:
        worker.stop()
