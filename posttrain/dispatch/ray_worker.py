"""Workers that are Ray actors: the same jobs on every machine of a Ray cluster.

`address=None` starts a local cluster (`ray.init()`), an address ("auto", "ray://host:10001")
joins an existing one. Each worker is one actor running one job at a time; a second thread in
the actor takes cancel() while a job runs. Actors are placed by resources: `resources` (custom
ones, e.g. {"rollout": 1}) sends them only to nodes started with them (`ray start --resources`).

Creating an actor does not wait for it: until Ray has placed it and it answered, the worker is
not `ready()` and gets no job, so a worker waiting for a node with room (one was lost, none has
joined yet) holds up nothing. An actor that dies (its process killed, its node lost, even
before it was placed) reports `died` and the executor starts a replacement, which Ray places
wherever the resources are, a node that rejoined included.
"""

from __future__ import annotations

import os
import threading
import time
from typing import Any

from posttrain.dispatch.job import Job, JobContext, JobFunction
from posttrain.dispatch.worker import Outcome, run_job


def ensure_ray(address: str | None = None, num_cpus: int | None = None) -> None:
    """Connect to Ray once per process: a local cluster, or the cluster at `address`."""
    import ray

    if ray.is_initialized():
        return
    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
    kwargs: dict[str, Any] = {"include_dashboard": False, "log_to_driver": False, "configure_logging": False}
    if address:
        kwargs["address"] = address
    else:
        kwargs["num_cpus"] = num_cpus or os.cpu_count() or 1
        # workers import the job function by module path: give them this process's path
        kwargs["runtime_env"] = {
            "env_vars": {
                "PYTHONPATH": os.pathsep.join(p for p in _import_path() if p),
                "OMP_NUM_THREADS": "1",
                "RAY_USAGE_STATS_ENABLED": "0",
            }
        }
    ray.init(**kwargs)


def _import_path() -> list[str]:
    import sys

    return [os.path.abspath(p or os.getcwd()) for p in sys.path if not p or os.path.isdir(p or ".")]


class _WorkerMetrics:
    """What this worker did, exported by its node's own Ray metrics exporter (`ray start
    --metrics-export-port`): jobs done by outcome, and their seconds."""

    def __init__(self) -> None:
        from ray.util.metrics import Counter, Histogram

        self.jobs = Counter("posttrain_worker_jobs", "jobs run by this worker, by outcome", tag_keys=("outcome",))
        self.seconds = Histogram(
            "posttrain_worker_job_seconds",
            "wall time of one job (a rollout: a task's group, with its verifier)",
            boundaries=[0.1, 0.3, 1, 3, 10, 30, 100, 300],
        )

    def record(self, outcome: str, seconds: float) -> None:
        self.jobs.inc(1, tags={"outcome": outcome})
        self.seconds.observe(seconds)


class _JobActor:
    """The actor body (wrapped with ray.remote on first use, so importing this module does not
    import ray)."""

    def __init__(self, fn: JobFunction, name: str) -> None:
        self.fn = fn
        self.name = name
        self._cancel = threading.Event()
        self._metrics = _WorkerMetrics()

    def where(self) -> tuple[int, str]:
        import ray

        return os.getpid(), ray.get_runtime_context().get_node_id()

    def run(self, job_id: str, attempt: int, payload: Any) -> tuple[str, Any, str | None]:
        self._cancel.clear()
        started = time.monotonic()
        outcome = run_job(self.fn, payload, JobContext(job_id, attempt, self.name, self._cancel.is_set))
        self._metrics.record(outcome.kind, time.monotonic() - started)
        return outcome.kind, outcome.value, outcome.error

    def cancel(self) -> None:
        self._cancel.set()


_REMOTE_CLASSES: dict[type, Any] = {}


def remote_class(cls: type) -> Any:
    """`cls` as a Ray actor class of two threads (a second call, a cancel or a question, is
    answered while the first runs), never restarted: wrapped on first use, so importing a
    module that defines an actor body does not import ray."""
    if cls not in _REMOTE_CLASSES:
        import ray

        _REMOTE_CLASSES[cls] = ray.remote(max_concurrency=2, max_restarts=0)(cls)
    return _REMOTE_CLASSES[cls]


class RayWorker:
    def __init__(self, name: str, fn: JobFunction, num_cpus: float, resources: dict[str, float] | None = None) -> None:
        self.name = name
        options = {"num_cpus": num_cpus, "name": None, **({"resources": resources} if resources else {})}
        self._actor = remote_class(_JobActor).options(**options).remote(fn, name)
        self._placed = self._actor.where.remote()  # answers once Ray has placed and started the actor
        self._pid: int | None = None
        self.where = ""  # "NODE_ID/PID" once placed
        self._ref = None
        self._dead = False
        self.death_reason = ""

    @property
    def pid(self) -> int | None:
        return self._pid

    def ready(self) -> bool:
        if self._placed is None:
            return not self._dead
        import ray
        from ray.exceptions import RayError

        done, _ = ray.wait([self._placed], timeout=0)
        if not done:
            return False
        try:
            self._pid, node = ray.get(self._placed)
            self.where = f"{node}/{self._pid}"
        except RayError as exc:
            self._dead = True  # lost with its node before it ever ran, or it could not start
            self.death_reason = str(exc).strip().splitlines()[-1] if str(exc).strip() else type(exc).__name__
        self._placed = None
        return not self._dead

    def start(self, job: Job) -> None:
        self._ref = self._actor.run.remote(job.id, job.attempts + 1, job.payload)

    def poll(self) -> Outcome | None:
        import ray
        from ray.exceptions import GetTimeoutError, RayActorError, RayTaskError

        if self._ref is None:
            return None
        ready, _ = ray.wait([self._ref], timeout=0)
        if not ready:
            return None
        ref, self._ref = self._ref, None
        try:
            kind, value, error = ray.get(ref)
            return Outcome(kind, value, error)
        except RayActorError as exc:  # its process was killed, or its node lost
            self._dead = True
            where = self.where or "not placed"
            return Outcome("died", error=f"worker actor {self.name} ({where}) died: {type(exc).__name__}")
        except (RayTaskError, GetTimeoutError) as exc:
            return Outcome("failed", error=str(exc).strip().splitlines()[-1])

    def cancel(self) -> None:
        if not self._dead:
            self._actor.cancel.remote()

    def alive(self) -> bool:
        if self._placed is not None:
            self.ready()
        return not self._dead

    def close(self) -> None:
        import ray

        try:
            ray.kill(self._actor, no_restart=True)
        except Exception:  # noqa: BLE001 - already gone
            pass


class RayWorkerFactory:
    kind = "ray"

    def __init__(
        self,
        fn: JobFunction,
        address: str | None = None,
        num_cpus: float = 1.0,
        max_workers: int = 8,
        resources: dict[str, float] | None = None,
    ) -> None:
        self.fn = fn
        self.num_cpus = num_cpus
        self.resources = resources
        # a local cluster's CPUs are scheduling tokens: declare enough for every worker
        ensure_ray(address, num_cpus=max(os.cpu_count() or 1, int(num_cpus * max_workers + 0.999)))

    def create(self, name: str) -> RayWorker:
        return RayWorker(name, self.fn, self.num_cpus, self.resources)

    def shutdown(self) -> None:
        pass
