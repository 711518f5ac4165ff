"""The rollout side on the dispatcher, synchronous (eta = 0) or asynchronous (eta >= 1): the engine
service steps the engine for every worker; rollout workers (threads | processes | Ray actors)
run one rollout job per task; the controller admits work under the staleness bound and buffers
what comes back (rollout_controller.py).

    rollouts = build_scheduled_rollouts(config, engine, mixture, trained_through, saved, run_root, job_fn)
    next_batch(step)         the oldest fresh groups; stale ones are regenerated meanwhile
    publish(weights, v)      weights into the engine service (in-flight rollouts continue or
                             restart), then the slots that version v lets in are admitted
    drain(until)             on a preemption notice: let rollouts in flight finish, up to a time
    state_dict()             buffered groups and the slots in flight (a resume re-queues those),
                             domain weights and worker count as `posttrain pipeline set` left them

Between steps it applies changes from control.json and keeps dispatch.json up to date
(control.py).
"""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Iterable
from contextlib import ExitStack
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

import torch

from posttrain.config import RunConfig
from posttrain.dispatch import Executor, RetryPolicy
from posttrain.dispatch.elastic import ElasticBounds
from posttrain.dispatch.factory import make_executor
from posttrain.dispatch.job import JobFunction
from posttrain.engine.interface import InferenceEngine
from posttrain.engine.service.engine_service import EngineService
from posttrain.engine.service.replica_sizing import DemandSampler, ReplicaSizer
from posttrain.engine.service.replicas import EngineReplicas, ReplicaClient
from posttrain.engine.service.transport import EngineClient
from posttrain.pipeline.control import ControlWatcher, StatusWriter
from posttrain.pipeline.experience_buffer import BufferedGroup, group_versions, version_gap
from posttrain.pipeline.rollout_controller import RolloutController, RolloutPlan
from posttrain.pipeline.rollout_source import RolloutBatch
from posttrain.pipeline.step_scoring import sampling_params
from posttrain.tasks.domains import DomainMixture

QUEUE_SAMPLE_S = 0.1  # how often the elastic replicas' sizer reads the work queue


def max_staleness(config: RunConfig) -> int:
    return config.async_.max_staleness if config.mode == "async" else 0


@dataclass
class ScheduledBatch(RolloutBatch):
    entries: list[BufferedGroup] = field(default_factory=list)


@dataclass
class RolloutParts:
    """What ScheduledRollouts runs on; build_scheduled_rollouts makes them."""

    service: EngineService
    executor: Executor
    controller: RolloutController
    watcher: ControlWatcher
    status: StatusWriter
    replicas: EngineReplicas | None = None
    demand: DemandSampler | None = None  # the elastic replicas' view of the work queue


def build_scheduled_rollouts(
    config: RunConfig,
    engine: InferenceEngine,
    mixture: DomainMixture,
    trained_through: int,
    saved: dict[str, Any] | None,
    run_root: Path,
    job_fn: JobFunction,
) -> ScheduledRollouts:
    """The engine service, the dispatcher's executor, the engine replicas ([engine] replicas),
    the controller and the control files, handed to a ScheduledRollouts. `saved`: its
    state_dict() from the checkpoint resumed from; `job_fn` runs one rollout job in a worker
    (`pipeline bench` wraps the default to model environment time)."""
    weights = dict((saved or {}).get("weights") or {d.name: d.weight for d in config.domains})
    workers = (saved or {}).get("workers") or _initial_workers(config)
    _set_mixture_weights(mixture, weights)
    with ExitStack() as built:  # what was built is closed again if a later part fails
        service = EngineService(engine, partial_rollouts=config.async_.partial_rollouts, host=_service_host(config))
        built.callback(service.close)
        executor = _executor(config, job_fn, workers, weights)
        built.callback(executor.shutdown)
        replicas = demand = None
        if config.engine.replica_start:
            replicas = EngineReplicas(
                config.engine,
                config.model.name,
                engine.model.named_parameters(),
                engine.version,
                config.async_.partial_rollouts,
                _replica_sizer(config),
            )
            built.callback(replicas.close)
            if replicas.sizer is not None:
                demand = DemandSampler(replicas.sizer, partial(_jobs, executor), QUEUE_SAMPLE_S)
        controller = _controller(config, mixture, executor, replicas.client() if replicas else service.client())
        if saved is not None:
            controller.load_state_dict(saved["controller"])
        else:
            controller.admitted_through = trained_through  # everything drawn before was trained
        parts = RolloutParts(
            service, executor, controller, ControlWatcher(run_root), StatusWriter(run_root), replicas, demand
        )
        earlier = saved or {}  # counters of earlier sessions ("scheduler_stats" in checkpoints before the rename)
        stats_before = earlier.get("dispatch_stats", earlier.get("scheduler_stats", {}))
        rollouts = ScheduledRollouts(config, mixture, parts, trained_through, weights, workers, stats_before)
        built.pop_all()
    return rollouts


class ScheduledRollouts:
    runs_in_background = True

    def __init__(
        self,
        config: RunConfig,
        mixture: DomainMixture,
        parts: RolloutParts,
        step: int,
        weights: dict[str, float],
        workers: int,
        stats_before: dict[str, int],
    ) -> None:
        """`weights`, `workers`: the domain weights and worker count in force (control.json changes
        them); `stats_before`: the dispatcher's counters of earlier sessions."""
        self.config = config
        self.mixture = mixture
        self.parts = parts
        self.service, self.executor, self.controller = parts.service, parts.executor, parts.controller
        self.replicas = parts.replicas
        self.eta = max_staleness(config)
        self.step = step
        self.weights = weights
        self.workers = workers
        self.stats_before = stats_before
        self._control: dict | None = None
        self.interrupt: threading.Event | None = None  # a preemption notice: ends the wait for a batch
        parts.status.start(self._snapshot)

    @property
    def engine(self) -> EngineService:
        return self.service

    def start(self, trained_through: int) -> None:
        self.service.reset_usage()
        self.controller.admit(trained_through)
        self._resize_replicas()
        if self.parts.demand is not None:
            self.parts.demand.start()

    def next_batch(self, step: int) -> ScheduledBatch:
        self.step = step
        self._control = self.parts.watcher.poll()
        if self._control:
            self._apply_control(self._control)
        waited = self.controller.waited_s
        entries = _training_order(self.controller.next_batch(step - 1, self.interrupt))
        waited = self.controller.waited_s - waited
        return ScheduledBatch(step, [e.group for e in entries], [e.group.task.id for e in entries], waited, entries)

    def publish(self, named_params: Iterable[tuple[str, torch.Tensor]] | None, version: int) -> None:
        if self.replicas is not None and named_params is not None:
            named_params = list(named_params)  # read twice: the driver's engine and the replicas
        if named_params is None:
            self.service.set_version(version)
        else:
            self.service.update_weights(named_params, version=version)
        if self.replicas is not None:
            self.replicas.update_weights(named_params, version)
        self.controller.admit(version)
        self._resize_replicas()

    def _resize_replicas(self) -> None:
        if self.replicas is not None:
            self.replicas.resize(_jobs(self.executor))

    def batch_metrics(self, batch: ScheduledBatch, step_s: float) -> dict:
        controller, usage = self.controller, self.service.reset_usage()
        gaps = [version_gap(batch.step - 1, e.head_version) for e in batch.entries]
        record = {
            "mode": self.config.mode,
            "max_staleness": self.eta,
            "stream_slots": [e.key for e in batch.entries],
            "rollout_workers": [controller.placements.pop(e.key, "") for e in batch.entries],
            "staleness": gaps,
            "staleness_max": max(gaps, default=0),
            "staleness_mean": sum(gaps) / max(len(gaps), 1),
            "partial_groups": sum(len(group_versions(e.group)) > 1 for e in batch.entries),
            "trainer_wait_s": batch.waited_s,
            "trainer_idle_frac": min(1.0, batch.waited_s / max(step_s, 1e-9)),
            "rollout_idle_frac": usage.idle_fraction,
            "engine_steps": usage.steps,
            "buffered": len(controller.buffer),
            "in_flight": controller.in_flight,
            "regenerated": controller.counters.regenerated,
            "requeued_on_resume": controller.counters.requeued_on_resume,
            "restored_buffered": controller.counters.restored_buffered,
            **{f"dispatch/{k}": v for k, v in self._dispatch_totals().items()},
            "dispatch/workers": self.executor.target_workers,
            "domain_weights": dict(self.weights),
            **failure_counts(batch.groups),
        }
        if self.replicas is not None:
            record["rollout_engines"] = [controller.engines.pop(e.key, "") for e in batch.entries]
            record.update(self._replica_counts())
            record["engine_replica_versions"] = self.replicas.pool_versions
        if self._control:
            record["control_revision"] = self._control.get("revision")
        return record

    def live_gauges(self) -> dict:
        """The run's live /metrics beside the latest step's record (live_metrics.py)."""
        status = self.executor.status()
        return {
            "rollout_buffered": len(self.controller.buffer),
            "rollout_in_flight": self.controller.in_flight,
            **{f"dispatch/{k}": v for k, v in self._dispatch_totals().items()},
            "dispatch/queued": status["queued"],
            "dispatch/running": status["running"],
            "dispatch/workers": status["target_workers"],
            **self.service.queue_gauges(),
        }

    def drain(self, until: float) -> None:
        self.controller.drain(until)

    def state_dict(self) -> dict:
        return {
            "controller": self.controller.state_dict(),
            "weights": self.weights,
            "workers": self.workers,
            "dispatch_stats": self._dispatch_totals(),
        }

    def summary(self, train_loop_s: float, steps_this_session: int) -> dict:
        sched = self.config.dispatch
        return {
            "pipeline": {
                "mode": self.config.mode,
                "max_staleness": self.eta,
                "executor": sched.executor,
                "worker_kind": sched.worker_kind if sched.executor == "local" else "ray-actor",
                "train_loop_s": train_loop_s,
                "steps_this_session": steps_this_session,
                "dispatch": self._dispatch_totals(),
                "controller": self.controller.counters.to_dict(),
                **(self._replica_counts() if self.replicas else {}),
            }
        }

    def close(self) -> None:
        parts = self.parts
        for close in (
            parts.demand and parts.demand.close,
            parts.status.close,
            parts.executor.shutdown,
            parts.replicas and parts.replicas.close,
            parts.service.close,
        ):
            if close:
                close()

    def _snapshot(self) -> dict:
        return {
            "mode": self.config.mode,
            "max_staleness": self.eta,
            "policy_version": self.service.version,
            "step": self.step,
            "buffered": len(self.controller.buffer),
            "in_flight": self.controller.in_flight,
            "admitted_through": self.controller.admitted_through,
            "executor": self.executor.status(),
        }

    def _replica_counts(self) -> dict[str, int]:
        return {
            "engine_replicas": self.replicas.count,
            "engine_replicas_grown": self.replicas.grown,
            "engine_replicas_retired": self.replicas.retired,
            "engine_replicas_replaced": self.replicas.replaced,
            **({"engine_replica_demand_jobs": self.replicas.sizer.demand_jobs} if self.replicas.sizer else {}),
        }

    def _dispatch_totals(self) -> dict:
        now = self.executor.stats.to_dict()
        return {k: self.stats_before.get(k, 0) + v for k, v in now.items()}

    def _apply_control(self, control: dict) -> None:
        new_weights = {k: float(v) for k, v in (control.get("weights") or {}).items() if k in self.mixture.domains}
        if new_weights:
            self.weights = {**self.weights, **new_weights}
            _set_mixture_weights(self.mixture, self.weights)
            self.executor.set_weights(self.weights)
        if control.get("policy") and control["policy"] != self.mixture.policy.name:
            self.mixture.set_policy(control["policy"])
        if control.get("workers"):
            self.workers = int(control["workers"])
            self.executor.scale(self.workers)


def failure_counts(groups) -> dict[str, int]:
    """`failures/<mode>`: the batch's episodes that ended in each failure mode (sandbox_died,
    timeout, ...)."""
    modes = Counter(
        trajectory.failure_mode
        for group in groups
        for trajectory in getattr(group, "trajectories", ())  # agent episodes; answer groups have none
        if trajectory.failure_mode
    )
    return {f"failures/{mode}": count for mode, count in modes.items()}


def _training_order(batch: list[BufferedGroup]) -> list[BufferedGroup]:
    """Answer groups, then terminal groups, each in stream order: InlineRollouts' order, so that
    a sync run through the dispatcher trains exactly what an inline run trains."""
    return sorted(batch, key=lambda e: (e.group.task.kind == "terminal", e.order))


def _set_mixture_weights(mixture: DomainMixture, weights: dict[str, float]) -> None:
    for name, weight in weights.items():
        if name in mixture.domains:
            mixture.domains[name].weight = weight


def _initial_workers(config: RunConfig) -> int:
    sched = config.dispatch
    if sched.workers:
        return sched.workers
    return sched.min_workers if sched.max_workers else config.rollout.prompts_per_step * (max_staleness(config) + 1)


def _executor(config: RunConfig, job_fn: JobFunction, workers: int, weights: dict[str, float]) -> Executor:
    sched = config.dispatch
    return make_executor(
        job_fn,
        sched.executor,
        workers=workers,
        worker_kind=sched.worker_kind,
        address=sched.address,
        cpus_per_worker=sched.cpus_per_worker,
        worker_resources=sched.worker_resources,
        retry=RetryPolicy(sched.max_attempts, sched.backoff_s, sched.backoff_max_s),
        weights=weights,
        preemption=sched.preemption,
        elastic=ElasticBounds(sched.min_workers, sched.max_workers, sched.idle_timeout_s)
        if sched.max_workers
        else None,
    )


def _controller(
    config: RunConfig, mixture: DomainMixture, executor: Executor, client: EngineClient | ReplicaClient
) -> RolloutController:
    plan = RolloutPlan(
        sampling_params(config),
        config.seed,
        config.rollout.prompts_per_step,
        config.model.name,
        config.rollout.system_prompt,
        config.agent,
        config.dispatch.max_attempts,
    )
    return RolloutController(plan, mixture, executor, client, max_staleness(config), config.train.steps)


def _jobs(executor: Executor) -> int:
    """The rollout work: jobs waiting and running."""
    status = executor.status()
    return status["queued"] + status["running"]


def _replica_sizer(config: RunConfig) -> ReplicaSizer | None:
    """Elastic replicas follow the work between their bounds, let go after the pool's idle timeout."""
    engine = config.engine
    if engine.max_replicas is None:
        return None
    bounds = ElasticBounds(engine.min_replicas, engine.max_replicas, config.dispatch.idle_timeout_s)
    return ReplicaSizer(bounds, engine.jobs_per_replica, engine.demand_window_s)


def _service_host(config: RunConfig) -> str | None:
    """A Unix socket serves workers on this machine; a Ray cluster elsewhere needs TCP."""
    if config.dispatch.executor == "ray" and config.dispatch.address:
        from posttrain.dispatch.ray_worker import ensure_ray

        ensure_ray(config.dispatch.address)
        import ray

        return ray.util.get_node_ip_address()
    return None
