"""What both RL loops write into a run directory besides metrics: held-out results in a step
record, step checkpoints, and summary.json."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from posttrain.config import RunConfig
from posttrain.evaluate.statistics import paired_bootstrap_ci
from posttrain.pipeline.evaluation import EvalResult, evaluate
from posttrain.pipeline.run_dir import RunDir
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


def save_step_checkpoint(config: RunConfig, rd: RunDir, step: int, trainer, tokenizer, mixture, wall_s: float,
                         pipeline_state: dict[str, Any] | None = None) -> Path:
    return save_checkpoint(
        rd.checkpoints, step, trainer.model, tokenizer, trainer.state_dict(),
        {"mixture": mixture.state_dict(), "policy_version": step, "wall_s": wall_s},
        keep=config.train.keep_checkpoints, pipeline_state=pipeline_state,
    )


def finish_step(config: RunConfig, step: int, record: dict, rows, *, store, metrics, progress, evals,
                checkpoint) -> None:
    """How every RL step ends, in both loops and in this order: its samples stored, a held-out
    evaluation when due, its record written and shown, then `checkpoint()` when one is due (a
    kill before that redoes the step on resume)."""
    store.add_groups(step, "train", rows)
    if eval_due(config, step):
        add_eval(record, evals.run(f"eval @ step {step}"))
    metrics.write(record)
    progress.step_done(step, record)
    if checkpoint_due(config, step):
        checkpoint()


def load_eval(path: Path) -> EvalResult:
    return EvalResult.from_json(json.loads(path.read_text()))


def run_summary(config: RunConfig, before: EvalResult, after: EvalResult, wall_s: float, resume: bool) -> dict:
    """summary.json: held-out reward before and after, and the paired bootstrap interval of the change."""
    ids = sorted(before.per_item)
    delta, low, high = paired_bootstrap_ci(
        [before.per_item[i] for i in ids], [after.per_item[i] for i in ids],
        samples=config.train.bootstrap_samples, seed=config.seed,
    )
    return {
        "eval_before": {"overall": before.overall, "per_domain": before.per_domain},
        "eval_after": {"overall": after.overall, "per_domain": after.per_domain},
        "delta": delta,
        "delta_ci95": [low, high],
        "n_heldout": len(ids),
        "steps": config.train.steps,
        "wall_s": wall_s,
        "resumed": bool(resume),
        "model": config.model.name,
    }


class HeldoutEvals:
    """The run's held-out evaluations through `engine`, shown on the progress display: before
    training (eval_before.json, reused by a resumed run), every eval_every steps, and after."""

    def __init__(self, config: RunConfig, engine, tokenizer, heldout, progress) -> None:
        self.config, self.engine, self.tokenizer, self.heldout, self.progress = config, engine, tokenizer, heldout, progress

    def run(self, label: str) -> EvalResult:
        config = self.config
        self.progress.start_eval(label)
        result = evaluate(self.engine, self.tokenizer, self.heldout,
                          config.train.eval_max_new_tokens or config.rollout.max_new_tokens,
                          config.rollout.system_prompt, batch_size=config.train.eval_batch_size,
                          on_progress=self.progress.advance_eval, agent=config.agent)
        self.progress.end_eval(label, result.overall)
        return result

    def before(self, rd: RunDir) -> EvalResult:
        if rd.eval_before.is_file():
            return load_eval(rd.eval_before)
        result = self.run("eval before")
        write_json_atomic(rd.eval_before, result.to_json())
        return result
