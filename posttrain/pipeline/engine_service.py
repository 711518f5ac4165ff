"""The rollout engine as a service: one thread steps the builtin engine continuously
(engine_loop.py); rollout workers anywhere (threads, processes, Ray actors) send it generation
calls over a socket (engine_transport.py).

    server = EngineServer(engine)                 # in the driver, next to the trainer
    client = server.client()                      # picklable; an InferenceEngine
    client.generate(requests)                     # from any worker: blocks until done
    server.update_weights(named_params, version)  # from the trainer, between engine steps

Calls from all workers share the engine's continuous batching and prefix cache; a weight update
mid-generation follows the partial-rollout rule (engine_loop.py, docs/async.md).
"""

from __future__ import annotations

from posttrain.pipeline.engine_loop import EngineLoop, PartialRolloutRule
from posttrain.pipeline.engine_transport import EngineClient, EngineListener


class EngineServer(EngineLoop):
    """The engine loop, and a listener that serves it to rollout workers."""

    def __init__(self, engine, partial_rollouts: PartialRolloutRule = "continue", host: str | None = None) -> None:
        super().__init__(engine, partial_rollouts)
        try:
            self._listener = EngineListener(self, host)
        except BaseException:
            super().close()
            raise

    def client(self) -> EngineClient:
        return self._listener.client()

    def close(self) -> None:
        """Stop serving and join every thread of the service (see EngineListener.close)."""
        super().close()
        self._listener.close()
