"""`posttrain preference CONFIG --out DIR`: DPO or SimPO on users' preference pairs.

    OUT/config.toml       the resolved config (data paths absolute)
    OUT/metrics.jsonl     one record per optimizer step: loss, reward_margin, accuracy, ...
    OUT/checkpoints/      step-N, Hugging Face directories with the optimizer state (--resume)
    OUT/model/            the final weights, a Hugging Face directory (`hf:OUT/model`)
    OUT/summary.json      steps, pairs used and skipped, the first and last losses

Everything that needs no model (the config, the output directory, every data row) is checked
before anything is written. The batches are a seeded plan, so a resumed run trains on the same
ones; the reference model is always the starting model."""

from __future__ import annotations

import random
import shutil
import time
from dataclasses import dataclass
from pathlib import Path

from rich.progress import BarColumn, MofNCompleteColumn, TextColumn, TimeElapsedColumn

from posttrain.config import PreferenceRunConfig, config_relative_path, dump_config, load_preference_config
from posttrain.console import draws_live, line_printer, progress_bar
from posttrain.errors import PosttrainError
from posttrain.models.spec import local_model_dir
from posttrain.observe.metrics import JsonlMetricsSink, read_metrics, truncate_metrics_after
from posttrain.pipeline.preference.pairs import PreferencePair, PreferenceRow, read_preference_rows, tokenize_pair
from posttrain.storage.atomic import write_json_atomic, write_text_atomic
from posttrain.train.checkpoint import (
    clean_partial_checkpoints,
    latest_checkpoint,
    load_checkpoint_state,
    restore_rng_state,
    save_checkpoint,
)
from posttrain.train.preference_trainer import PreferenceTrainer
from posttrain.train.trainer import finite_or_raise


@dataclass
class CheckedPreference:
    """A preference run whose config, output directory and data rows passed; nothing written."""

    config: PreferenceRunConfig
    out: Path
    resume: bool
    rows: list[PreferenceRow]
    problems: list[str]  # the bad rows left out, one line each


def check_preference(config_path: Path | None, out: Path, resume: bool, strict: bool = False) -> CheckedPreference:
    if resume:
        if not (out / "config.toml").is_file():
            raise PosttrainError(f"{out}: not a preference run directory (no config.toml) — nothing to resume")
        config = load_preference_config(out / "config.toml")
    else:
        if config_path is None:
            raise PosttrainError("give a config file: posttrain preference CONFIG --out DIR")
        config = load_preference_config(config_path)
        base = Path(config_path).parent
        config.preference.data = [str(config_relative_path(p, base).resolve()) for p in config.preference.data]
        if out.exists() and not out.is_dir():
            raise PosttrainError(f"{out}: exists and is not a directory")
        if out.is_dir() and any(p.name != "config.toml" for p in out.iterdir()):
            raise PosttrainError(f"{out}: not empty; use --resume to continue it or choose another --out")
    if config.model.lora is not None:
        raise PosttrainError("[model] lora: preference training updates every weight; remove the [model.lora] table")
    local_model_dir(config.model.name)
    rows, problems = read_preference_rows([Path(p) for p in config.preference.data], strict=strict)
    return CheckedPreference(config, out, resume, rows, problems)


def plan_pair_batches(n: int, batch_size: int, epochs: int, shuffle: bool, seed: int) -> list[list[int]]:
    """Each epoch the n pairs (a seeded shuffle of them, or file order) cut into batches."""
    batches = []
    for epoch in range(epochs):
        order = list(range(n))
        if shuffle:
            random.Random(seed * 100_003 + epoch).shuffle(order)
        batches += [order[i : i + batch_size] for i in range(0, n, batch_size)]
    return batches


def preference_checked(checked: CheckedPreference, console=None) -> dict:
    """Train (or finish, with --resume) into checked.out; returns the summary."""
    import torch

    from posttrain.models.loading import load_model, load_tokenizer

    started = time.perf_counter()
    config, settings, out = checked.config, checked.config.preference, checked.out
    say = line_printer(console)
    if not checked.resume:
        out.mkdir(parents=True, exist_ok=True)
        write_text_atomic(out / "config.toml", dump_config(config))
    if config.threads:
        torch.set_num_threads(config.threads)
    torch.manual_seed(config.seed)
    tokenizer = load_tokenizer(config.model.name)
    pairs, too_long = _tokenized(tokenizer, checked.rows, settings.max_length)
    for where in too_long:
        say(f"skipped: {where}: prompt: fills max_length ({settings.max_length} tokens); no response token left")
    if not pairs:
        raise PosttrainError("no preference pair left to train on")
    model = load_model(config.model.name, config.model.dtype, seed=config.seed)
    trainer = PreferenceTrainer(model, settings, pad_id=tokenizer.pad_token_id)
    checkpoints = out / "checkpoints"
    clean_partial_checkpoints(checkpoints)
    done = _resume(trainer, checkpoints, config.model.dtype) if checked.resume else 0
    truncate_metrics_after(out / "metrics.jsonl", done)
    batches = plan_pair_batches(len(pairs), settings.batch_size, settings.epochs, settings.shuffle, config.seed)
    metrics = JsonlMetricsSink(out / "metrics.jsonl")
    with _StepsBar(console, f"{settings.loss}", len(batches), done) as advance:
        for step, batch in enumerate(batches, start=1):
            if step <= done:
                continue
            chosen = [pairs[i] for i in batch]
            stats = trainer.step(
                [p.prompt_ids for p in chosen], [p.chosen_ids for p in chosen], [p.rejected_ids for p in chosen]
            )
            finite_or_raise(stats)
            metrics.write({"step": step, "pairs": len(batch), **stats})
            advance(f"loss {stats['loss']:.4f}  accuracy {stats['accuracy']:.2f}  margin {stats['reward_margin']:+.3f}")
            if step % settings.checkpoint_every == 0 or step == len(batches):
                save_checkpoint(
                    checkpoints, step, trainer.write_files, tokenizer, trainer.state_dict(), {"stage": "preference"}, 1
                )
    metrics.close()
    _save_model(trainer, tokenizer, out / "model")
    losses = [r["loss"] for r in read_metrics(out / "metrics.jsonl")]
    summary = {
        "model": f"hf:{out / 'model'}",
        "loss": settings.loss,
        "steps": len(batches),
        "pairs": len(pairs),
        "skipped_rows": len(checked.problems) + len(too_long),
        "first_loss": losses[0] if losses else None,
        "last_loss": losses[-1] if losses else None,
        "wall_s": time.perf_counter() - started,
    }
    write_json_atomic(out / "summary.json", summary)
    return summary


def _tokenized(tokenizer, rows: list[PreferenceRow], max_length: int) -> tuple[list[PreferencePair], list[str]]:
    pairs, too_long = [], []
    for row in rows:
        pair = tokenize_pair(tokenizer, row)
        if len(pair.prompt_ids) < max_length:
            pairs.append(pair)
        else:
            too_long.append(row.where)
    return pairs, too_long


def _resume(trainer: PreferenceTrainer, checkpoints: Path, dtype: str) -> int:
    """The step of the last checkpoint, its weights and optimizer state loaded (0: none)."""
    from posttrain.models.loading import load_model

    checkpoint = latest_checkpoint(checkpoints)
    if checkpoint is None:
        return 0
    trainer.model.load_state_dict(load_model(f"hf:{checkpoint}", dtype).state_dict())
    state, trainer_state = load_checkpoint_state(checkpoint)
    trainer.load_state_dict(trainer_state)
    restore_rng_state(trainer_state["rng"])
    return state["step"]


def _save_model(trainer: PreferenceTrainer, tokenizer, final: Path) -> None:
    tmp = final.parent / ".tmp-model"
    shutil.rmtree(tmp, ignore_errors=True)
    trainer.write_files(tmp)
    tokenizer.save_pretrained(tmp)
    shutil.rmtree(final, ignore_errors=True)
    tmp.rename(final)


class _StepsBar:
    """A progress bar over optimizer steps, as a context manager whose value is advance(info).
    On a console that is not a terminal (a log file): one line per step instead."""

    def __init__(self, console, label: str, total: int, done: int) -> None:
        self.label, self.total, self.step = label, total, done
        self.progress = progress_bar(
            TextColumn("[bold]{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            TextColumn("{task.fields[info]}"),
            out=console,
            transient=True,
        )
        self.task = self.progress.add_task(label, total=total, completed=done, info="")

    def __enter__(self):
        self.progress.__enter__()
        return self._advance

    def _advance(self, info: str) -> None:
        self.step += 1
        self.progress.update(self.task, advance=1, info=info)
        if not draws_live(self.progress.console):
            self.progress.console.print(f"{self.label} step {self.step}/{self.total}  {info}", highlight=False)

    def __exit__(self, *exc) -> None:
        self.progress.__exit__(*exc)
