"""The synchronous RL loop, readable top to bottom as the algorithm:

    for step in steps:
        tasks     = mixture.sample_step(step)            # domain mixture, data cursor
        groups    = engine.generate(tasks, n)            # rollouts, engine logprobs, version
        rewards   = verifier(groups)
        advantages= grpo/rloo/reinforce++(rewards)       # drop groups with equal rewards
        stats     = trainer.step(samples)                # loss, KL, clip, mismatch
        engine.update_weights(trainer.weights, step)     # weight sync
        log, evaluate every N steps, checkpoint every M steps
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass, replace
from pathlib import Path

import torch

from posttrain.config import RunConfig, dump_config, load_config
from posttrain.engine.factory import build_engine
from posttrain.engine.interface import SamplingParams
from posttrain.errors import PosttrainError
from posttrain.models.loading import load_model, load_tokenizer
from posttrain.observe.metrics import JsonlMetricsSink, truncate_metrics_after
from posttrain.observe.trajectory_store import TrajectoryStore
from posttrain.pipeline.build import build_mixture, load_policy_pair
from posttrain.pipeline.progress import TrainingProgress
from posttrain.pipeline.rollout import generate_groups, sample_seed
from posttrain.pipeline.terminal_rollout import run_terminal_groups
from posttrain.pipeline.run_dir import RunDir
from posttrain.pipeline.run_outputs import (
    HeldoutEvals, finish_step, run_summary, save_step_checkpoint,
)
from posttrain.pipeline.step_scoring import sampling_params, score_step, trajectory_rows
from posttrain.storage.atomic import write_json_atomic
from posttrain.train.checkpoint import clean_partial_checkpoints, latest_checkpoint, load_checkpoint_state, restore_rng_state
from posttrain.train.trainer import PolicyTrainer, finite_or_raise


@dataclass
class TrainingRun:
    config: RunConfig
    run_dir: RunDir
    config_dir: Path


def prepare_run(config_path: Path | None, out: Path, resume: bool) -> TrainingRun:
    run_dir = RunDir(out)
    if resume:
        if not run_dir.config.is_file():
            raise PosttrainError(f"{out}: not a run directory (no config.toml) — nothing to resume")
        config = load_config(run_dir.config)
        source_dir = Path(config_path).parent if config_path else Path.cwd()
        return TrainingRun(config, run_dir, source_dir)
    if config_path is None:
        raise PosttrainError("give a config file: posttrain train CONFIG --out RUN_DIR")
    config = load_config(config_path)
    if out.exists() and any(out.iterdir()):
        raise PosttrainError(f"{out}: run directory is not empty; use --resume to continue it or choose another --out")
    out.mkdir(parents=True, exist_ok=True)
    # Task files are resolved against the config's folder; keep it absolute in the copy.
    for domain in config.domains:
        source = domain.source.removeprefix("jsonl:")
        if (domain.source.startswith("jsonl:") or source.endswith(".jsonl")) and not Path(source).is_absolute():
            domain.source = "jsonl:" + str((Path(config_path).parent / source).resolve())
    tmp = run_dir.config.with_suffix(".tmp")
    tmp.write_text(dump_config(config))
    os.replace(tmp, run_dir.config)
    return TrainingRun(config, run_dir, Path(config_path).parent)


def _gate_log(console):
    if console is None:
        return print
    return lambda line: console.print(line, markup=False, highlight=False)


def train(config_path: Path | None, out: Path, resume: bool = False, console=None) -> dict:
    run = prepare_run(config_path, out, resume)
    config, rd = run.config, run.run_dir
    if config.threads:
        torch.set_num_threads(config.threads)
    torch.manual_seed(config.seed)

    mixture = build_mixture(config, run.config_dir, quality_dir=rd.root / "quality",
                            log=_gate_log(console))
    if uses_scheduler(config):  # the builtin engine: rollouts through the scheduler, sync or async
        from posttrain.pipeline.orchestrator import train_scheduled

        return train_scheduled(run, mixture, resume, console=console)
    heldout = mixture.heldout()
    tokenizer = load_tokenizer(config.model.name)

    start_step, wall_before = 0, 0.0
    checkpoint = latest_checkpoint(rd.checkpoints) if resume else None
    clean_partial_checkpoints(rd.checkpoints)
    trainer_model, engine_model = load_policy_pair(config, weights_from=checkpoint)
    reference = load_model(config.model.name, "float32", seed=config.seed).eval() if config.algorithm.kl_coef > 0 else None
    trainer = PolicyTrainer(
        trainer_model, config.optim, config.algorithm, config.rollout.temperature,
        pad_id=tokenizer.pad_token_id, reference_model=reference,
    )
    if checkpoint is not None:
        state, trainer_state = load_checkpoint_state(checkpoint)
        start_step = state["step"]
        wall_before = state.get("wall_s", 0.0)
        trainer.load_state_dict(trainer_state)
        restore_rng_state(trainer_state["rng"])
        mixture.load_state_dict(state["mixture"])
    if resume:
        # Work after the last checkpoint was never committed: drop it and redo it.
        truncate_metrics_after(rd.metrics, start_step)
    engine = build_engine(config, engine_model, tokenizer, version=start_step)

    store = TrajectoryStore(rd.trajectories)
    if resume:
        store.delete_after(start_step)
    metrics = JsonlMetricsSink(rd.metrics)
    run_started = time.perf_counter()
    progress = TrainingProgress(config.train.steps, len(heldout), console=console)

    evals = HeldoutEvals(config, engine, tokenizer, heldout, progress)

    with progress:
        before = evals.before(rd)
        progress.set_completed(start_step)

        params = sampling_params(config)
        for step in range(start_step + 1, config.train.steps + 1):
            tasks = mixture.sample_step(step, config.rollout.prompts_per_step)
            record, groups, advantages = rl_step(config, engine, trainer, tokenizer, tasks, step, params)
            finish_step(config, step, record, trajectory_rows(groups, advantages), store=store, metrics=metrics,
                        progress=progress, evals=evals,
                        checkpoint=lambda: save_step_checkpoint(
                            config, rd, step, trainer, tokenizer, mixture,
                            wall_s=wall_before + time.perf_counter() - run_started))

        after = evals.run("eval after")
    write_json_atomic(rd.eval_after, after.to_json())
    metrics.close()
    store.close()

    summary = run_summary(config, before, after, wall_before + time.perf_counter() - run_started, resume)
    write_json_atomic(rd.summary, summary)
    return summary


def uses_scheduler(config: RunConfig) -> bool:
    """Rollouts go through the scheduler and the engine service unless the engine is hf, whose
    generate() is one batch call that cannot serve concurrent workers: then this module's
    inline loop generates each step's groups in one call."""
    return config.engine.backend != "hf"


def rl_step(config: RunConfig, engine, trainer: PolicyTrainer, tokenizer, tasks, step: int, params: SamplingParams):
    """One synchronous RL step: generate groups, score, compute advantages, update the
    policy, push the new weights to the engine. Returns the step's metrics record."""
    step_started = time.perf_counter()
    answer = [t for t in tasks if t.kind != "terminal"]
    terminal = [t for t in tasks if t.kind == "terminal"]
    groups = []
    if answer:
        groups += generate_groups(
            engine, tokenizer, answer, params, config.rollout.system_prompt,
            seed_for_slot=lambda slot: sample_seed(config.seed, step, slot),
        )
    if terminal:
        agent_params = replace(params, n=1, max_tokens=config.agent.reply_tokens)
        groups += run_terminal_groups(engine, tokenizer, terminal, config.rollout.group_size, agent_params,
                                      config.agent, seed=sample_seed(config.seed, step, len(tasks)))
    rollout_s = time.perf_counter() - step_started
    record, samples, advantages = score_step(config, groups)
    if samples:
        stats = trainer.step(samples)
        finite_or_raise(stats)
        engine.update_weights(trainer.model.named_parameters(), version=step)
        record.update(stats)
    else:
        engine.version = step  # nothing to learn from; the policy is unchanged
    step_s = time.perf_counter() - step_started
    generated = sum(g.generated_tokens() for g in groups)
    record.update(step=step, policy_version=step, rollout_s=rollout_s, step_s=step_s,
                  rollout_tokens_per_s=generated / max(rollout_s, 1e-9),
                  tokens_per_s=(generated + record.get("train_tokens", 0.0)) / max(step_s, 1e-9),
                  task_ids=[t.id for t in tasks])
    return record, groups, advantages
