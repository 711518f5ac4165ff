"""Executor settings -> a running Executor: `local` (threads or processes) or `ray`."""

from __future__ import annotations

from typing import Literal

from posttrain.dispatch.elastic import ElasticBounds
from posttrain.dispatch.executor import Executor
from posttrain.dispatch.job import JobFunction
from posttrain.dispatch.retry import RetryPolicy


def make_executor(
    fn: JobFunction,
    executor: Literal["local", "ray"] = "local",
    workers: int = 2,
    worker_kind: Literal["thread", "process"] = "thread",
    address: str | None = None,
    cpus_per_worker: float = 1.0,
    worker_resources: dict[str, float] | None = None,
    retry: RetryPolicy | None = None,
    weights: dict[str, float] | None = None,
    preemption: bool = True,
    elastic: ElasticBounds | None = None,
) -> Executor:
    """`fn` must be a module-level function for process and Ray workers (they import it)."""
    if executor == "ray":
        from posttrain.dispatch.ray_worker import RayWorkerFactory

        factory = RayWorkerFactory(
            fn,
            address=address,
            num_cpus=cpus_per_worker,
            max_workers=max(workers, elastic.max_workers if elastic else workers),
            resources=worker_resources,
        )
    elif worker_kind == "process":
        from posttrain.dispatch.process_worker import ProcessWorkerFactory

        factory = ProcessWorkerFactory(fn)
    else:
        from posttrain.dispatch.thread_worker import ThreadWorkerFactory

        factory = ThreadWorkerFactory(fn)
    return Executor(factory, workers=workers, retry=retry, weights=weights, preemption=preemption, elastic=elastic)
