"""The rollout engine as a service: one thread steps the builtin engine continuously
(rollout_engine.py over engine/stepping_loop.py); rollout workers anywhere (threads, processes,
Ray actors) send it generation calls over a socket (transport.py).

    service = EngineService(engine)                # in the driver, next to the trainer
    client = service.client()                      # picklable; an InferenceEngine
    client.generate(requests)                      # from any worker: blocks until done
    service.update_weights(named_params, version)  # from the trainer, between engine steps

Calls from all workers share the engine's continuous batching and prefix cache; a weight update
mid-generation follows the partial-rollout rule (rollout_engine.py, docs/async.md).
"""

from __future__ import annotations

from posttrain.engine.service.rollout_engine import PartialRolloutRule, RolloutEngine
from posttrain.engine.service.transport import EngineClient, EngineListener


class EngineService(RolloutEngine):
    """The rollout engine, and a listener that serves it to rollout workers."""

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
