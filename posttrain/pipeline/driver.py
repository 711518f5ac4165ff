"""The RL driver, one for every mode: a single controller that reads as the algorithm, while the
rollout side and the trainer do the work.

    rollouts = InlineRollouts (hf, vllm: generated in this thread)
             | ScheduledRollouts (engine service + rollout workers; sync at eta = 0, async above)
    for step in steps:
        batch   = rollouts.next_batch(step)          # groups: engine token ids, logprobs, rewards
        samples = score(batch)                       # group-relative advantages, dynamic sampling
        stats   = trainer.step(samples)              # loss, KL, clip, TIS, logprob mismatch
        rollouts.publish(trainer.named_weights(), step)  # weight sync; lets the next rollouts in
        finish the step: trajectories, metrics, held-out eval every N, checkpoint every M
    on SIGTERM: stop at the step boundary, save the in-flight state, publish it, exit
    (preemption_save.py)
"""

from __future__ import annotations

from pathlib import Path

from posttrain.config import RunConfig
from posttrain.console import line_printer
from posttrain.dispatch.job import JobFunction
from posttrain.engine.factory import build_engine
from posttrain.faults import fault_point
from posttrain.models.loading import load_tokenizer
from posttrain.pipeline.domain_conflicts import CONFLICTS, DomainConflicts
from posttrain.pipeline.domain_monitor import DomainMonitor
from posttrain.pipeline.heldout_sets import heldout_set_of
from posttrain.pipeline.inline_rollouts import InlineRollouts
from posttrain.pipeline.learning_signal import NoUpdateWatch
from posttrain.pipeline.live_metrics import open_live_metrics
from posttrain.pipeline.preemption_save import save_on_notice
from posttrain.pipeline.rollout import attach_trainer_values
from posttrain.pipeline.rollout_job import run_rollout_job
from posttrain.pipeline.rollout_source import RolloutSource
from posttrain.pipeline.run_mirror import RunMirror
from posttrain.pipeline.run_outputs import RunOutputs, load_eval, save_step_checkpoint
from posttrain.pipeline.scheduled_rollouts import build_scheduled_rollouts
from posttrain.pipeline.sft.stage import run_sft_stage
from posttrain.pipeline.shutdown_notice import RunPreempted, ShutdownNotice
from posttrain.pipeline.stage_summary import stages_summary
from posttrain.pipeline.starting_point import StartingPoint, starting_point
from posttrain.pipeline.step_metrics import StepMetrics
from posttrain.pipeline.step_scoring import RewardErrorLog, score_step, trajectory_rows
from posttrain.pipeline.training_run import (
    CheckedRun,
    TrainingRun,
    check_run,
    set_torch_threads_and_seed,
    start_run,
)
from posttrain.storage.atomic import write_json_atomic
from posttrain.tasks.domains import DomainMixture
from posttrain.train.trainer import PolicyTrainer, finite_or_raise


def train(config_path: Path | None, out: Path, resume: bool = False, console=None) -> dict:
    """`posttrain train CONFIG --out RUN_DIR [--resume]` -> summary.json's content. With an
    `[sft]` table the supervised warm start runs first (into RUN_DIR/sft/) and RL starts from
    its model; summary.json then compares base, SFT and RL on the same held-out items."""
    return train_checked(check_run(config_path, out, resume), console=console)


def train_checked(checked: CheckedRun, console=None) -> dict:
    """`train` after `check_run` passed: from here on the run directory is written."""
    run = checked.run
    start_run(run)
    set_torch_threads_and_seed(run.config)
    mixture = checked.gated(line_printer(console))
    if run.config.sft is None:
        return run_rl(run, mixture, run.resume, console=console)
    rd = run.run_dir
    warm = run_sft_stage(
        run.config,
        rd.root / "sft",
        mixture,
        load_tokenizer(run.config.model.name),
        run.config_dir,
        resume=run.resume,
        console=console,
    )
    if warm.sft is not None and not rd.eval_before.is_file():  # RL's "before" is the warm-started model
        write_json_atomic(rd.eval_before, warm.sft.to_json())
    summary = run_rl(run, mixture, run.resume, console=console, initial_weights=warm.model_dir)
    if warm.base is not None and warm.sft is not None:
        after = load_eval(rd.eval_after)
        summary.update(
            stages_summary(
                warm.base,
                warm.sft,
                after,
                samples=run.config.train.bootstrap_samples,
                seed=run.config.seed,
                sets=heldout_set_of(mixture.heldout()),
            )
        )
        write_json_atomic(rd.summary, summary)
    return summary


def run_rl(
    run: TrainingRun,
    mixture: DomainMixture,
    resume: bool,
    console=None,
    job_fn: JobFunction = run_rollout_job,
    initial_weights: Path | None = None,
) -> dict:
    """The RL loop. `initial_weights`: a model folder to start from instead of [model] name
    (the warm start's); a checkpoint of this run, when resuming, wins over both."""
    config, rd = run.config, run.run_dir
    heldout = mixture.heldout()
    tokenizer = load_tokenizer(config.model.name)
    start = starting_point(config, rd.checkpoints, resume, tokenizer, mixture, initial_weights)
    if resume and start.step:
        line_printer(console)(f"resuming: from the checkpoint at step {start.step} of {config.train.steps}")
    trainer = start.trainer
    rollouts = open_rollouts(config, start, tokenizer, mixture, rd.root, job_fn)
    live = None
    mirror = RunMirror(config.storage.url, rd) if config.storage.url else None
    notice = ShutdownNotice(config.train.preemption_grace_s)
    rollouts.interrupt = notice.event  # a notice ends the wait for a batch
    with notice:
        try:
            outputs = RunOutputs(
                config, rd, resume, start.step, start.wall_s, rollouts.engine, tokenizer, heldout, console=console
            )
            metrics = StepMetrics(rollouts)

            def checkpoint(step: int) -> None:
                path = save_step_checkpoint(
                    config,
                    rd,
                    step,
                    trainer,
                    tokenizer,
                    mixture,
                    wall_s=outputs.wall_s(),
                    pipeline_state=rollouts.state_dict(),
                )
                if mirror is not None:
                    mirror.publish_checkpoint(path, keep=config.train.keep_checkpoints)

            live = open_live_metrics(config, rd.root, rollouts, line_printer(console))
            monitor = DomainMonitor(config, mixture, outputs.evals, line_printer(console))
            conflicts = DomainConflicts(config, rd.root / CONFLICTS, start.step)
            no_update = NoUpdateWatch(config, line_printer(console))
            reward_errors, say = RewardErrorLog(), line_printer(console)
            with outputs:
                before = outputs.eval_before()
                if mirror is not None:  # the URL holds the run from now on, checkpoint or not
                    mirror.publish_run_files()
                monitor.start(before)
                metrics.start_loop()
                rollouts.start(start.step)
                trained = start.step
                try:
                    for step in range(start.step + 1, config.train.steps + 1):
                        if notice.received:
                            raise RunPreempted
                        record, groups, advantages = rl_step(config, rollouts, trainer, step, metrics)
                        for line in reward_errors.new_lines(groups):
                            say(line)
                        # the mixture policy's weights and pass rates, the curriculum's per family and difficulty
                        record.update(mixture.observe(groups, advantages, step))
                        if conflicts.due(step):
                            record.update(conflicts.measure(step, trainer, groups, advantages))
                        last = step == config.train.steps
                        # A record holds one evaluation: a background one still running when the
                        # last step's inline one is due would land in the same record and lose its
                        # fields. So the step before the last waits for it, and with an evaluation
                        # every step (every = 1) there is no room to overlap: all run inline.
                        record.update(monitor.collect(wait=step >= config.train.steps - 1))
                        if monitor.due(step):
                            # async: the evaluation overlaps the next steps (not after the last one)
                            background = (
                                rollouts.runs_in_background
                                and config.mode == "async"
                                and not last
                                and config.monitor.every > 1
                            )
                            record.update(monitor.evaluate(step, background=background))
                        if live:
                            live.observe(record)
                        outputs.finish_step(step, record, trajectory_rows(groups, advantages), checkpoint)
                        no_update.observe(step, record, groups, advantages)
                        trained = step
                    if notice.received:  # after the last step: its checkpoint stands; eval after waits
                        raise RunPreempted
                except RunPreempted:
                    saved = save_on_notice(
                        notice, rollouts, trained, rd, checkpoint, mirror, config.train.keep_checkpoints
                    )
                    raise RunPreempted(saved) from None
                loop_s = metrics.loop_s()
                trainer.close()  # other trainer ranks are done: the rest is rank 0's
                after = outputs.eval_after()
        finally:
            if live:
                live.close()
            trainer.close()
            rollouts.close()
    summary = outputs.finish_run(
        before, after, rollouts.summary(loop_s, config.train.steps - start.step) | monitor.cost(loop_s)
    )
    if mirror is not None:
        mirror.publish_run_files()
    return summary


def rl_step(
    config: RunConfig, rollouts: RolloutSource, trainer: PolicyTrainer, step: int, metrics: StepMetrics | None = None
):
    """One RL step -> (its metrics record, the batch's groups, their advantages)."""
    metrics = metrics or StepMetrics(rollouts)
    metrics.start_step()
    batch = rollouts.next_batch(step)
    record, samples, advantages = score_step(config, batch.groups)
    if samples:
        stats = trainer.step(samples)
        finite_or_raise(stats)
        record.update(stats)
        attach_trainer_values(batch.groups, samples, trainer.last_token_values)
    fault_point("train_step")
    rollouts.publish(trainer.named_weights() if samples else None, version=step)
    record.update(metrics.record(step, batch, train_tokens=record.get("train_tokens", 0.0)))
    return record, batch.groups, advantages


def open_rollouts(
    config: RunConfig, start: StartingPoint, tokenizer, mixture: DomainMixture, run_root: Path, job_fn: JobFunction
) -> RolloutSource:
    """The hf and vllm engines' generate() is one batch call that cannot serve concurrent workers:
    their rollouts run inline. The builtin engine serves the dispatcher's workers."""
    engine = build_engine(config, start.engine_model, tokenizer, version=start.step)
    if config.engine.backend == "vllm":
        start.engine_model = None  # vLLM holds its own copy of the weights
    if config.engine.backend in ("hf", "vllm"):
        return InlineRollouts(
            config,
            engine,
            tokenizer,
            draw_tasks=lambda step: mixture.sample_step(step, config.rollout.prompts_per_step),
        )
    return build_scheduled_rollouts(config, engine, mixture, start.step, start.pipeline_state, run_root, job_fn)
