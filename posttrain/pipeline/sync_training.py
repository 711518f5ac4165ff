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
from posttrain.engine.interface import SamplingParams
from posttrain.errors import PosttrainError
from posttrain.observe.metrics import JsonlMetricsSink, truncate_metrics_after
from posttrain.observe.trajectory_store import TrajectoryStore
from posttrain.pipeline.build import build_engine, build_mixture, load_policy_pair
from posttrain.pipeline.evaluation import EvalResult, evaluate
from posttrain.pipeline.progress import TrainingProgress
from posttrain.pipeline.rollout import RolloutGroup, generate_groups, sample_seed
from posttrain.pipeline.terminal_rollout import run_terminal_groups
from posttrain.pipeline.run_dir import RunDir, write_json_atomic
from posttrain.evaluate.statistics import paired_bootstrap_ci
from posttrain.rl import grpo_advantages, informative_groups, reinforce_pp_advantages, rloo_advantages
from posttrain.train.checkpoint import (
    clean_partial_checkpoints,
    latest_checkpoint,
    load_checkpoint_state,
    restore_rng_state,
    save_checkpoint,
)
from posttrain.train.model_loading import load_model, load_tokenizer
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


def compute_advantages(config: RunConfig, rewards: torch.Tensor) -> torch.Tensor:
    algo = config.algorithm
    if algo.advantage == "grpo":
        return grpo_advantages(rewards, normalize_std=algo.normalize_std)
    if algo.advantage == "rloo":
        return rloo_advantages(rewards)
    return reinforce_pp_advantages(rewards)


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
    eval_tokens = config.train.eval_max_new_tokens or config.rollout.max_new_tokens
    system_prompt = config.rollout.system_prompt
    run_started = time.perf_counter()
    progress = TrainingProgress(config.train.steps, len(heldout), console=console)

    def run_eval(label: str) -> EvalResult:
        progress.start_eval(label)
        result = evaluate(engine, tokenizer, heldout, eval_tokens, system_prompt,
                          batch_size=config.train.eval_batch_size, on_progress=progress.advance_eval,
                          agent=config.agent)
        progress.end_eval(label, result.overall)
        return result

    with progress:
        if rd.eval_before.is_file():
            before = EvalResult.from_json(_read_json(rd.eval_before))
        else:
            before = run_eval("eval before")
            write_json_atomic(rd.eval_before, before.to_json())
        progress.set_completed(start_step)

        params = sampling_params(config)
        for step in range(start_step + 1, config.train.steps + 1):
            tasks = mixture.sample_step(step, config.rollout.prompts_per_step)
            record, groups, advantages = rl_step(config, engine, trainer, tokenizer, tasks, step, params)
            store.add_groups(step, "train", _trajectory_rows(groups, advantages))
            if config.train.eval_every and step % config.train.eval_every == 0 and step != config.train.steps:
                result = run_eval(f"eval @ step {step}")
                record["eval/overall"] = result.overall
                record.update({f"eval/{d}": v for d, v in result.per_domain.items()})
            metrics.write(record)
            progress.step_done(step, record)
            if step % config.train.checkpoint_every == 0 or step == config.train.steps:
                save_checkpoint(
                    rd.checkpoints, step, trainer.model, tokenizer, trainer.state_dict(),
                    {"mixture": mixture.state_dict(), "policy_version": step,
                     "wall_s": wall_before + time.perf_counter() - run_started},
                    keep=config.train.keep_checkpoints,
                )

        after = run_eval("eval after")
    write_json_atomic(rd.eval_after, after.to_json())
    metrics.close()
    store.close()

    ids = sorted(before.per_item)
    delta, low, high = paired_bootstrap_ci(
        [before.per_item[i] for i in ids], [after.per_item[i] for i in ids],
        samples=config.train.bootstrap_samples, seed=config.seed,
    )
    summary = {
        "eval_before": {"overall": before.overall, "per_domain": before.per_domain},
        "eval_after": {"overall": after.overall, "per_domain": after.per_domain},
        "delta": delta,
        "delta_ci95": [low, high],
        "n_heldout": len(ids),
        "steps": config.train.steps,
        "wall_s": wall_before + time.perf_counter() - run_started,
        "resumed": bool(resume),
        "model": config.model.name,
    }
    write_json_atomic(rd.summary, summary)
    return summary


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
    record, samples, advantages = _score_step(config, groups)
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


def sampling_params(config: RunConfig) -> SamplingParams:
    return SamplingParams(
        n=config.rollout.group_size,
        temperature=config.rollout.temperature,
        top_p=config.rollout.top_p,
        top_k=config.rollout.top_k,
        max_tokens=config.rollout.max_new_tokens,
    )


def _score_step(config: RunConfig, groups: list[RolloutGroup]):
    rewards = torch.tensor([g.reward_values for g in groups], dtype=torch.float32)
    keep = informative_groups(rewards) if config.algorithm.dynamic_sampling else torch.ones(len(groups), dtype=torch.bool)
    advantages = torch.zeros_like(rewards)
    if bool(keep.any()):
        if config.algorithm.advantage == "reinforce_pp":
            advantages[keep] = compute_advantages(config, rewards[keep])
        else:
            advantages = compute_advantages(config, rewards)
            advantages[~keep] = 0.0
    samples = [sample for gi, g in enumerate(groups) if keep[gi] for sample in g.train_samples(advantages[gi].tolist())]
    record: dict = {
        "reward_mean": float(rewards.mean()),
        "pass_rate": sum(r.passed for g in groups for r in g.rewards) / max(rewards.numel(), 1),
        "groups_kept": int(keep.sum()),
        "groups": len(groups),
        "completion_len_mean": sum(g.generated_tokens() for g in groups) / max(rewards.numel(), 1),
        "truncated_fraction": sum(g.truncated() for g in groups) / max(rewards.numel(), 1),
    }
    by_domain: dict[str, list[float]] = {}
    for g in groups:
        by_domain.setdefault(g.task.domain, []).extend(g.reward_values)
    record.update({f"reward/{d}": sum(v) / len(v) for d, v in sorted(by_domain.items())})
    return record, samples, advantages


def _trajectory_rows(groups, advantages: torch.Tensor):
    for gi, g in enumerate(groups):
        yield from g.store_rows(advantages[gi].tolist())


def _read_json(path: Path) -> dict:
    import json

    return json.loads(path.read_text())
