"""What the RL driver writes into the run directory: trajectories.sqlite and metrics.jsonl step
by step, held-out results in a step record, step checkpoints, eval_before.json, eval_after.json
and summary.json; and the progress display that shows it."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from posttrain.agent.trained_settings import checkpoint_files
from posttrain.config import RunConfig
from posttrain.evaluate.statistics import paired_bootstrap_ci
from posttrain.observe.metrics import MetricSinks, truncate_metrics_after
from posttrain.observe.resident_memory import peak_rss_mb
from posttrain.observe.trajectory_store import TrajectoryStore
from posttrain.pipeline.domain_monitor import alarms_of_run
from posttrain.pipeline.evaluation import EvalResult, evaluate
from posttrain.pipeline.progress import TrainingProgress
from posttrain.pipeline.run_dir import RunDir
from posttrain.pipeline.stage_summary import graded_summary
from posttrain.storage.atomic import write_json_atomic
from posttrain.train.checkpoint import save_checkpoint


def eval_due(config: RunConfig, step: int) -> bool:
    """A mid-run held-out evaluation after this step (the last step gets "eval after")."""
    return bool(config.train.eval_every) and step % config.train.eval_every == 0 and step != config.train.steps


def add_eval(record: dict, result: EvalResult) -> None:
    record["eval/overall"] = result.overall
    record.update({f"eval/{d}": v for d, v in result.per_domain.items()})


def checkpoint_due(config: RunConfig, step: int) -> bool:
    return step % config.train.checkpoint_every == 0 or step == config.train.steps


def save_step_checkpoint(
    config: RunConfig,
    rd: RunDir,
    step: int,
    trainer,
    tokenizer,
    mixture,
    wall_s: float,
    pipeline_state: dict[str, Any] | None = None,
) -> Path:
    return save_checkpoint(
        rd.checkpoints,
        step,
        trainer.write_files,
        tokenizer,
        trainer.state_dict(),
        {"mixture": mixture.state_dict(), "policy_version": step, "wall_s": wall_s},
        keep=config.train.keep_checkpoints,
        pipeline_state=pipeline_state,
        extra_files=checkpoint_files(config),
    )


def load_eval(path: Path) -> EvalResult:
    return EvalResult.from_json(json.loads(path.read_text()))


def run_summary(
    config: RunConfig,
    before: EvalResult,
    after: EvalResult,
    wall_s: float,
    resume: bool,
    domain_of: dict[str, str] | None = None,
) -> dict:
    """summary.json: held-out reward before and after, and the paired bootstrap interval of the
    change, overall and (with `domain_of`: item id -> domain) per domain, with the items that
    went from passed to failed and back."""
    ids = sorted(before.per_item)
    delta, low, high = paired_bootstrap_ci(
        [before.per_item[i] for i in ids],
        [after.per_item[i] for i in ids],
        samples=config.train.bootstrap_samples,
        seed=config.seed,
    )
    per_domain = {}
    for domain in sorted(set((domain_of or {}).values())):
        mine = [i for i in ids if domain_of.get(i) == domain and i in after.per_item]
        d_delta, d_low, d_high = paired_bootstrap_ci(
            [before.per_item[i] for i in mine],
            [after.per_item[i] for i in mine],
            samples=config.train.bootstrap_samples,
            seed=config.seed,
        )
        worse = sum(before.per_item[i] >= 1.0 > after.per_item[i] for i in mine)
        better = sum(after.per_item[i] >= 1.0 > before.per_item[i] for i in mine)
        per_domain[domain] = {
            "delta": d_delta,
            "delta_ci95": [d_low, d_high],
            "n": len(mine),
            "items_worse": worse,  # passed before, failed after: the paired test's discordant pairs
            "items_better": better,
        }
    return {
        "eval_before": {"overall": before.overall, "per_domain": before.per_domain},
        "eval_after": {"overall": after.overall, "per_domain": after.per_domain},
        "delta": delta,
        "delta_ci95": [low, high],
        "per_domain_delta": per_domain,
        "heldout_graded": graded_summary(
            [("before", before), ("after", after)], config.train.bootstrap_samples, config.seed
        ),
        "n_heldout": len(ids),
        "steps": config.train.steps,
        "wall_s": wall_s,
        "resumed": bool(resume),
        "model": config.model.name,
        **peak_rss_mb(),  # the whole run's, this process's and its largest finished child's
    }


class HeldoutEvals:
    """The run's held-out evaluations through `engine`, shown on the progress display: before
    training (eval_before.json, reused by a resumed run), every eval_every steps, and after."""

    def __init__(self, config: RunConfig, engine, tokenizer, heldout, progress) -> None:
        self.config, self.engine, self.tokenizer, self.heldout, self.progress = (
            config,
            engine,
            tokenizer,
            heldout,
            progress,
        )

    def run(self, label: str, tasks=None) -> EvalResult:
        """Evaluate the held-out set (or `tasks`, a part of it) with the engine's current weights."""
        config = self.config
        self.progress.start_eval(label, None if tasks is None else len(tasks))
        result = evaluate(
            self.engine,
            self.tokenizer,
            self.heldout if tasks is None else tasks,
            config.train.eval_max_new_tokens or config.rollout.max_new_tokens,
            config.rollout.system_prompt,
            batch_size=config.train.eval_batch_size,
            on_progress=self.progress.advance_eval,
            agent=config.agent,
        )
        self.progress.end_eval(label, result.overall)
        return result

    def before(self, rd: RunDir) -> EvalResult:
        if rd.eval_before.is_file():
            return load_eval(rd.eval_before)
        result = self.run("eval before")
        write_json_atomic(rd.eval_before, result.to_json())
        return result


class RunOutputs:
    """The run directory's outputs for one session of training. A resumed run first drops the
    records and trajectories of steps after its checkpoint: those steps are redone."""

    def __init__(
        self,
        config: RunConfig,
        rd: RunDir,
        resume: bool,
        trained_through: int,
        wall_before: float,
        evaluation_engine,
        tokenizer,
        heldout,
        console=None,
    ) -> None:
        self.config, self.rd, self.resume = config, rd, resume
        self.trained_through, self.wall_before = trained_through, wall_before
        if resume:
            truncate_metrics_after(rd.metrics, trained_through)
        self.store = TrajectoryStore(rd.trajectories)
        if resume:
            self.store.delete_after(trained_through)
        self.metrics = MetricSinks(
            rd.metrics,
            config.logging.report_to,
            trained_through if resume else None,
            logging=config.logging,
            run_config=config.model_dump(mode="json", exclude_none=True),
        )
        self.started = time.perf_counter()
        self.progress = TrainingProgress(config.train.steps, len(heldout), console=console)
        self.evals = HeldoutEvals(config, evaluation_engine, tokenizer, heldout, self.progress)
        self.domain_of = {task.id: task.domain for task in heldout}

    def __enter__(self) -> RunOutputs:
        self.progress.__enter__()
        return self

    def __exit__(self, *exc) -> None:
        self.progress.__exit__(*exc)

    def wall_s(self) -> float:
        """Wall time of the whole run, earlier sessions included."""
        return self.wall_before + time.perf_counter() - self.started

    def eval_before(self) -> EvalResult:
        result = self.evals.before(self.rd)
        self.progress.set_completed(self.trained_through)
        return result

    def eval_after(self) -> EvalResult:
        return self.evals.run("eval after")

    def finish_step(self, step: int, record: dict, rows, checkpoint: Callable[[int], Any]) -> None:
        """How every RL step ends, in this order: its samples stored, a held-out evaluation when
        due, its record written and shown, then `checkpoint(step)` when one is due (a kill
        before that redoes the step on resume)."""
        self.store.add_groups(step, "train", rows)
        if eval_due(self.config, step):
            add_eval(record, self.evals.run(f"eval @ step {step}"))
        self.metrics.write(record)
        self.progress.step_done(step, record)
        if checkpoint_due(self.config, step):
            checkpoint(step)

    def finish_run(self, before: EvalResult, after: EvalResult, extra: dict) -> dict:
        """eval_after.json and summary.json (`extra`: what the rollout side adds to it)."""
        write_json_atomic(self.rd.eval_after, after.to_json())
        self.metrics.close()
        self.store.close()
        summary = run_summary(self.config, before, after, self.wall_s(), self.resume, self.domain_of)
        alarms = alarms_of_run(self.rd.metrics)
        if self.config.monitor.every:
            summary["seesaw_alarms"] = alarms
        summary.update(extra)
        write_json_atomic(self.rd.summary, summary)
        return summary
