"""What every route of the app shares: the model served, the engine worker and the metrics."""

from __future__ import annotations

import time
from dataclasses import dataclass, field

from posttrain.serve.engine_worker import EngineWorker
from posttrain.serve.metrics import ServerMetrics
from posttrain.serve.trace_recorder import TraceRecorder


@dataclass
class ServedModel:
    name: str
    engine: object  # the builtin engine, or serve/vllm_stepper.py's
    tokenizer: object
    max_model_len: int
    variant: str  # standard or fast
    vocab_size: int
    system_prompt: str | None = None  # for chats with no system message and no tools (a trained agent's)


@dataclass
class AppState:
    served: ServedModel
    worker: EngineWorker
    metrics: ServerMetrics
    created: int = field(default_factory=lambda: int(time.time()))  # /v1/models' `created`
    recorder: TraceRecorder | None = None  # serve --record
