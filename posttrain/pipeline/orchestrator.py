"""The RL loop on the rollout scheduler, synchronous (eta = 0) or asynchronous (eta >= 1). One
driver that reads as the algorithm; the engine service and the rollout workers do the work:

    server     = EngineServer(engine)                 # steps the engine for every worker
    executor   = scheduler workers (threads | processes | Ray actors) running rollout jobs
    controller.admit(v)                               # stream slots of steps <= v + 1 + eta
    for step in steps:
        batch  = controller.next_batch(v)             # oldest fresh groups; stale ones regenerated
        advantages, samples = score(batch)            # group-relative, dynamic sampling
        stats  = trainer.step(samples)                # TIS against the engine's logprobs
        server.update_weights(trainer.weights, v + 1) # in-flight rollouts continue (or restart)
        controller.admit(v + 1)
        log gaps, idle time, retries; evaluate every N; checkpoint every M with the buffered
        groups and the slots in flight (a resume re-queues those)
"""

from __future__ import annotations

import time

from posttrain.config import RunConfig
from posttrain.engine.factory import build_engine
from posttrain.faults import fault_point
from posttrain.models.loading import load_model, load_tokenizer
from posttrain.observe.metrics import JsonlMetricsSink, truncate_metrics_after
from posttrain.observe.trajectory_store import TrajectoryStore
from posttrain.pipeline.build import load_policy_pair
from posttrain.pipeline.control import ControlWatcher, StatusWriter
from posttrain.pipeline.engine_service import EngineServer
from posttrain.pipeline.experience_buffer import BufferedGroup, group_versions, version_gap
from posttrain.pipeline.progress import TrainingProgress
from posttrain.pipeline.rollout_controller import RolloutController, RolloutPlan
from posttrain.pipeline.rollout_job import run_rollout_job
from posttrain.pipeline.run_outputs import (
    HeldoutEvals, finish_step, run_summary, save_step_checkpoint,
)
from posttrain.pipeline.step_scoring import sampling_params, score_step, trajectory_rows
from posttrain.pipeline.sync_training import TrainingRun
from posttrain.scheduler import RetryPolicy
from posttrain.scheduler.job import JobFunction
from posttrain.scheduler.factory import make_executor
from posttrain.storage.atomic import write_json_atomic
from posttrain.tasks.domains import DomainMixture
from posttrain.train.checkpoint import (
    clean_partial_checkpoints,
    latest_checkpoint,
    load_checkpoint_state,
    load_pipeline_state,
    restore_rng_state,
)
from posttrain.train.trainer import PolicyTrainer, finite_or_raise


def max_staleness(config: RunConfig) -> int:
    return config.async_.max_staleness if config.mode == "async" else 0


def train_scheduled(run: TrainingRun, mixture: DomainMixture, resume: bool, console=None,
                    job_fn: JobFunction = run_rollout_job) -> dict:
    """`job_fn` runs one rollout job in a worker (the default; `pipeline bench` wraps it to
    model environment time)."""
    config, rd = run.config, run.run_dir
    eta = max_staleness(config)
    heldout = mixture.heldout()
    tokenizer = load_tokenizer(config.model.name)

    checkpoint = latest_checkpoint(rd.checkpoints) if resume else None
    clean_partial_checkpoints(rd.checkpoints)
    trainer_model, engine_model = load_policy_pair(config, weights_from=checkpoint)
    reference = load_model(config.model.name, "float32", seed=config.seed).eval() if config.algorithm.kl_coef > 0 else None
    trainer = PolicyTrainer(trainer_model, config.optim, config.algorithm, config.rollout.temperature,
                            pad_id=tokenizer.pad_token_id, reference_model=reference)
    start_step, wall_before, pipeline = 0, 0.0, None
    if checkpoint is not None:
        state, trainer_state = load_checkpoint_state(checkpoint)
        start_step, wall_before = state["step"], state.get("wall_s", 0.0)
        trainer.load_state_dict(trainer_state)
        restore_rng_state(trainer_state["rng"])
        mixture.load_state_dict(state["mixture"])
        pipeline = load_pipeline_state(checkpoint)
    if resume:
        truncate_metrics_after(rd.metrics, start_step)  # steps after the checkpoint are redone
    weights = dict((pipeline or {}).get("weights") or {d.name: d.weight for d in config.domains})
    workers = (pipeline or {}).get("workers") or config.scheduler.workers or config.rollout.prompts_per_step * (eta + 1)
    _set_mixture_weights(mixture, weights)

    server = executor = status = None
    try:
        server = EngineServer(build_engine(config, engine_model, tokenizer, version=start_step),
                              partial_rollouts=config.async_.partial_rollouts, host=_service_host(config))
        sched = config.scheduler
        executor = make_executor(job_fn, sched.executor, workers=workers, worker_kind=sched.worker_kind,
                                 address=sched.address, cpus_per_worker=sched.cpus_per_worker,
                                 retry=RetryPolicy(sched.max_attempts, sched.backoff_s, sched.backoff_max_s),
                                 weights=weights, preemption=sched.preemption)
        plan = RolloutPlan(sampling_params(config), config.seed, config.rollout.prompts_per_step, config.model.name,
                           config.rollout.system_prompt, config.agent)
        controller = RolloutController(plan, mixture, executor, server.client(), eta, config.train.steps)
        if pipeline is not None:
            controller.load_state_dict(pipeline["controller"])
        else:
            controller.admitted_through = start_step  # everything drawn before the checkpoint was trained
        stats_before = (pipeline or {}).get("scheduler_stats", {})

        store = TrajectoryStore(rd.trajectories)
        if resume:
            store.delete_after(start_step)
        metrics = JsonlMetricsSink(rd.metrics)
        progress = TrainingProgress(config.train.steps, len(heldout), console=console)
        current = {"step": start_step}

        def snapshot() -> dict:
            return {"mode": config.mode, "max_staleness": eta, "policy_version": server.version,
                    "step": current["step"], "buffered": len(controller.buffer), "in_flight": controller.in_flight,
                    "admitted_through": controller.admitted_through, "executor": executor.status()}

        status = StatusWriter(rd.root, snapshot)
        watcher = ControlWatcher(rd.root)
        run_started = time.perf_counter()

        evals = HeldoutEvals(config, server, tokenizer, heldout, progress)

        with progress:
            before = evals.before(rd)
            progress.set_completed(start_step)

            loop_started = last = time.perf_counter()
            server.reset_usage()
            controller.admit(start_step)
            for step in range(start_step + 1, config.train.steps + 1):
                current["step"] = step
                control = watcher.poll()
                if control:
                    weights, workers = _apply_control(control, weights, workers, mixture, executor)
                waited = controller.waited_s
                batch = controller.next_batch(step - 1)
                waited = controller.waited_s - waited
                batch = _training_order(batch)
                groups = [entry.group for entry in batch]
                record, samples, advantages = score_step(config, groups)
                if samples:
                    stats = trainer.step(samples)
                    finite_or_raise(stats)
                    record.update(stats)
                fault_point("train_step")
                if samples:
                    server.update_weights(trainer.model.named_parameters(), version=step)
                else:
                    server.set_version(step)  # nothing to learn from; the policy is unchanged
                controller.admit(step)

                now = time.perf_counter()
                cycle, last = now - last, now
                usage = server.reset_usage()
                record.update(_pipeline_record(step, batch, waited, cycle, usage,
                                               controller, executor, stats_before, eta, config.mode))
                generated = sum(g.generated_tokens() for g in groups)
                record.update(rollout_s=waited, step_s=cycle, rollout_tokens_per_s=generated / max(cycle, 1e-9),
                              tokens_per_s=(generated + record.get("train_tokens", 0.0)) / max(cycle, 1e-9))
                record["domain_weights"] = dict(weights)
                if control:
                    record["control_revision"] = control.get("revision")
                finish_step(config, step, record, trajectory_rows(groups, advantages), store=store, metrics=metrics,
                            progress=progress, evals=evals,
                            checkpoint=lambda: save_step_checkpoint(
                                config, rd, step, trainer, tokenizer, mixture,
                                wall_s=wall_before + time.perf_counter() - run_started,
                                pipeline_state={"controller": controller.state_dict(), "weights": weights,
                                                "workers": workers,
                                                "scheduler_stats": _totals(stats_before, executor.stats.to_dict())}))
            loop_s = time.perf_counter() - loop_started
            after = evals.run("eval after")
    finally:
        for close in (status and status.close, executor and executor.shutdown, server and server.close):
            if close:
                close()
    write_json_atomic(rd.eval_after, after.to_json())
    metrics.close()
    store.close()
    summary = run_summary(config, before, after, wall_before + time.perf_counter() - run_started, resume)
    summary["pipeline"] = {"mode": config.mode, "max_staleness": eta, "executor": sched.executor,
                           "worker_kind": sched.worker_kind if sched.executor == "local" else "ray-actor",
                           "train_loop_s": loop_s, "steps_this_session": config.train.steps - start_step,
                           "scheduler": _totals(stats_before, executor.stats.to_dict()),
                           "controller": controller.counters.to_dict()}
    write_json_atomic(rd.summary, summary)
    return summary


# ---- pieces of the loop ----------------------------------------------------------------------


def _training_order(batch: list[BufferedGroup]) -> list[BufferedGroup]:
    """Answer groups, then terminal groups, each in stream order: the synchronous loop's order,
    so that a sync run through the scheduler trains exactly what the inline loop trained."""
    return sorted(batch, key=lambda e: (e.group.task.kind == "terminal", e.order))


def _pipeline_record(step: int, batch: list[BufferedGroup], waited: float, cycle: float, usage,
                     controller: RolloutController, executor, stats_before: dict, eta: int, mode: str) -> dict:
    gaps = [version_gap(step - 1, e.head_version) for e in batch]
    totals = _totals(stats_before, executor.stats.to_dict())
    return {
        "step": step,
        "policy_version": step,
        "mode": mode,
        "max_staleness": eta,
        "task_ids": [e.group.task.id for e in batch],
        "stream_slots": [e.key for e in batch],
        "staleness": gaps,
        "staleness_max": max(gaps, default=0),
        "staleness_mean": sum(gaps) / max(len(gaps), 1),
        "partial_groups": sum(len(group_versions(e.group)) > 1 for e in batch),
        "trainer_wait_s": waited,
        "trainer_idle_frac": min(1.0, waited / max(cycle, 1e-9)),
        "rollout_idle_frac": usage.idle_fraction,
        "engine_steps": usage.steps,
        "buffered": len(controller.buffer),
        "in_flight": controller.in_flight,
        "regenerated": controller.counters.regenerated,
        "requeued_on_resume": controller.counters.requeued_on_resume,
        "restored_buffered": controller.counters.restored_buffered,
        **{f"scheduler/{k}": v for k, v in totals.items()},
        "scheduler/workers": executor.target_workers,
    }


def _totals(before: dict, now: dict) -> dict:
    return {k: before.get(k, 0) + v for k, v in now.items()}


def _set_mixture_weights(mixture: DomainMixture, weights: dict[str, float]) -> None:
    for name, weight in weights.items():
        if name in mixture.domains:
            mixture.domains[name].weight = weight


def _apply_control(control: dict, weights: dict, workers: int, mixture: DomainMixture, executor):
    new_weights = {k: float(v) for k, v in (control.get("weights") or {}).items() if k in mixture.domains}
    if new_weights:
        weights = {**weights, **new_weights}
        _set_mixture_weights(mixture, weights)
        executor.set_weights(weights)
    if control.get("workers"):
        workers = int(control["workers"])
        executor.scale(workers)
    return weights, workers


def _service_host(config: RunConfig) -> str | None:
    """A Unix socket serves workers on this machine; a Ray cluster elsewhere needs TCP."""
    if config.scheduler.executor == "ray" and config.scheduler.address:
        from posttrain.scheduler.ray_worker import ensure_ray

        ensure_ray(config.scheduler.address)
        import ray

        return ray.util.get_node_ip_address()
    return None
