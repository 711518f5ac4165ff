"""The SFT stage: a supervised warm start on verified agent transcripts, before RL.

    demonstrations  the training tasks' reference steps, replayed through the agent's tool
                    format and kept when the verifier passes (demonstrations.jsonl); for
                    single-reply tasks (the scene domain), the prompt and the reference answer
    train           `epochs` passes of next-token NLL on the model's own tokens (the loss mask
                    of multi-turn RL), `batch_size` transcripts per optimizer step
    rounds          rejection sampling: the policy's own episodes on fresh training tasks, the
                    passed ones kept (accepted-R.jsonl) and trained on (expert iteration)
    evaluate        held-out pass@1 of the base model (eval_base.json) and after (eval_sft.json)
    model/          the final weights, a Hugging Face directory (`hf:DIR/model`)

Every phase's data is written before it is trained on and checkpoints fall on phase ends too, so
`--resume` after a kill redoes at most the steps since the last checkpoint, on the same batches."""

from __future__ import annotations

import random
import shutil
import time
from dataclasses import dataclass
from pathlib import Path

from rich.progress import BarColumn, MofNCompleteColumn, TextColumn, TimeElapsedColumn

from posttrain.agent.trained_settings import checkpoint_files
from posttrain.config import AlgorithmConfig, OptimConfig, RunConfig, config_relative_path
from posttrain.console import draws_live, line_printer, progress_bar
from posttrain.cpu import bf16_is_fast
from posttrain.engine.factory import build_engine
from posttrain.errors import PosttrainError
from posttrain.faults import fault_point
from posttrain.observe.metrics import JsonlMetricsSink, truncate_metrics_after
from posttrain.pipeline.build import load_policy_pair
from posttrain.pipeline.evaluation import EvalResult, evaluate
from posttrain.pipeline.run_outputs import load_eval
from posttrain.pipeline.sft.conversations import chat_transcripts
from posttrain.pipeline.sft.demonstrations import answer_demonstrations, collect_demonstrations
from posttrain.pipeline.sft.rejection import RejectionRound, answer_rejection_sample, rejection_sample
from posttrain.pipeline.sft.transcripts import Transcript, read_transcripts, write_transcripts
from posttrain.storage.atomic import write_json_atomic
from posttrain.tasks.domains import DomainMixture
from posttrain.train.checkpoint import (
    clean_partial_checkpoints,
    latest_checkpoint,
    load_checkpoint_state,
    restore_rng_state,
    save_checkpoint,
)
from posttrain.train.device import resolve_device
from posttrain.train.trainer import PolicyTrainer, finite_or_raise


@dataclass(frozen=True)
class SFTDir:
    root: Path

    @property
    def demonstrations(self) -> Path:
        return self.root / "demonstrations.jsonl"

    def accepted(self, round_: int) -> Path:
        return self.root / f"accepted-{round_}.jsonl"

    @property
    def metrics(self) -> Path:
        return self.root / "metrics.jsonl"

    @property
    def checkpoints(self) -> Path:
        return self.root / "checkpoints"

    @property
    def model(self) -> Path:
        return self.root / "model"

    @property
    def eval_base(self) -> Path:
        return self.root / "eval_base.json"

    @property
    def eval_sft(self) -> Path:
        return self.root / "eval_sft.json"


@dataclass
class SFTOutcome:
    model_dir: Path
    base: EvalResult | None
    sft: EvalResult | None
    steps: int
    wall_s: float


def run_sft_stage(
    config: RunConfig,
    root: Path,
    mixture: DomainMixture,
    tokenizer,
    config_dir: Path,
    resume: bool = False,
    console=None,
) -> SFTOutcome:
    """Run (or finish, or skip when done) the SFT stage into `root`; returns the model's folder."""
    if config.sft is None:
        raise PosttrainError("the config has no [sft] table")
    started = time.perf_counter()
    sd = SFTDir(root)
    root.mkdir(parents=True, exist_ok=True)
    say = line_printer(console)
    if (sd.model / "config.json").is_file():
        say(f"sft: done already ({sd.model})")
        return SFTOutcome(sd.model, _load_eval(sd.eval_base), _load_eval(sd.eval_sft), 0, 0.0)
    stage = _Stage(config, sd, mixture, tokenizer, config_dir, resume, say, console)
    stage.run(config.sft.evaluate)
    return SFTOutcome(sd.model, stage.base, stage.sft_result, stage.step, time.perf_counter() - started)


class _Stage:
    def __init__(self, config, sd: SFTDir, mixture, tokenizer, config_dir: Path, resume: bool, say, console) -> None:
        self.config, self.sft, self.sd = config, config.sft, sd
        self.mixture, self.tokenizer, self.say, self.console = mixture, tokenizer, say, console
        self.extra = [t for p in self.sft.data for t in read_transcripts(config_relative_path(p, config_dir))]
        chat_paths = [config_relative_path(p, config_dir) for p in self.sft.chat_data]
        self.extra += chat_transcripts(chat_paths, tokenizer, say=say)
        if self.sft.demonstrations == 0 and not self.extra:
            raise PosttrainError("[sft]: no data: demonstrations = 0 and no data files (set demonstrations or data)")
        clean_partial_checkpoints(sd.checkpoints)
        checkpoint = latest_checkpoint(sd.checkpoints) if resume else None
        device = resolve_device(config.train.device, config.engine.backend)  # a missing GPU: before loading
        trainer_model, engine_model = load_policy_pair(config, weights_from=checkpoint)
        optim = OptimConfig(
            lr=self.sft.lr,
            warmup_steps=self.sft.warmup_steps,
            grad_clip=config.optim.grad_clip,
            weight_decay=config.optim.weight_decay,
            micro_batch_tokens=config.optim.micro_batch_tokens,
            activation_checkpointing=config.optim.activation_checkpointing,
            bf16_autocast=sft_bf16_autocast(self.sft.bf16_autocast, device),
        )
        algorithm = AlgorithmConfig(loss="nll", tis_cap=None, dynamic_sampling=False)
        self.trainer = PolicyTrainer(trainer_model, optim, algorithm, 1.0, pad_id=tokenizer.pad_token_id, device=device)
        if config.engine.backend == "hf":  # the hf engine generates where the trainer runs
            engine_model = engine_model.to(device)
        self.step = 0
        if checkpoint is not None:
            state, trainer_state = load_checkpoint_state(checkpoint)
            self.step = state["step"]
            self.trainer.load_state_dict(trainer_state)
            restore_rng_state(trainer_state["rng"])
            say(f"sft: resumed from {checkpoint.name}")
        if resume:
            truncate_metrics_after(sd.metrics, self.step)
        self.engine = build_engine(config, engine_model, tokenizer, version=self.step)
        self.metrics = JsonlMetricsSink(sd.metrics)
        self.base: EvalResult | None = _load_eval(sd.eval_base)
        self.sft_result: EvalResult | None = None
        self.cursor = 0  # global step index while replaying the plan

    def run(self, evaluate_heldout: bool) -> None:
        heldout = self.mixture.heldout()
        if evaluate_heldout and self.base is None:
            self.base = self._evaluate(heldout, "eval base")
            write_json_atomic(self.sd.eval_base, self.base.to_json())
        demos = self._demonstrations()
        self._train_phase("demonstrations", demos + self.extra, self.sft.epochs, phase_seed=0)
        for round_ in range(1, self.sft.rejection_rounds + 1):
            accepted = self._rejection_round(round_)
            if accepted:
                self._train_phase(f"round {round_}", accepted, self.sft.rejection_epochs, phase_seed=round_)
        self._sync_engine()
        result = self._evaluate(heldout, "eval sft") if evaluate_heldout else None
        if result is not None:
            write_json_atomic(self.sd.eval_sft, result.to_json())
        self.sft_result = result
        self._save_model()
        self.metrics.close()

    # ---- data ------------------------------------------------------------------------------

    def _training_tasks(self, count: int, stream: int):
        """`count` training tasks (never held-out ones), from a stream of their own per phase."""
        draw = DomainMixture(list(self.mixture.domains.values()), seed=self.config.seed + 7919 * (stream + 1))
        return draw.sample_step(0, count)

    def _demonstrations(self) -> list[Transcript]:
        if self.sft.demonstrations == 0:
            return []
        if self.sd.demonstrations.is_file():
            return read_transcripts(self.sd.demonstrations)
        tasks = self._training_tasks(self.sft.demonstrations, stream=0)
        terminal = [t for t in tasks if t.kind == "terminal"]
        answer = [t for t in tasks if t.kind != "terminal"]
        demos = answer_demonstrations(answer, self.tokenizer, self.config.rollout.system_prompt)
        if terminal:
            with self._episodes_bar("demonstrations", len(terminal)) as advance:
                style = self.sft.demonstration_style
                demos += collect_demonstrations(
                    terminal, self.tokenizer, self.config.agent, on_episode_end=advance, style=style
                )
        write_transcripts(self.sd.demonstrations, demos)
        tokens = sum(d.trained_tokens for d in demos)
        self.say(f"sft: {len(demos)} demonstrations verified ({tokens} trained tokens)")
        return demos

    def _rejection_round(self, round_: int) -> list[Transcript]:
        path = self.sd.accepted(round_)
        if path.is_file():
            return read_transcripts(path)
        self._sync_engine()
        tasks = self._training_tasks(self.sft.rejection_tasks, stream=round_)
        terminal = [t for t in tasks if t.kind == "terminal"]
        answer = [t for t in tasks if t.kind != "terminal"]
        outcome = answer_rejection_sample(
            self.engine,
            self.tokenizer,
            answer,
            self.sft.rejection_samples,
            self.sft.rejection_temperature,
            self.config.rollout.max_new_tokens,
            self.config.rollout.system_prompt,
            seed=self.config.seed * 1_000_003 + round_,
        )
        if terminal:
            with self._episodes_bar(f"rejection round {round_}", len(terminal) * self.sft.rejection_samples) as advance:
                episodes = rejection_sample(
                    self.engine,
                    self.tokenizer,
                    terminal,
                    self.sft.rejection_samples,
                    self.sft.rejection_temperature,
                    self.config.agent,
                    seed=self.config.seed + round_,
                    on_episode_end=advance,
                )
            outcome = RejectionRound(
                outcome.accepted + episodes.accepted,
                outcome.episodes + episodes.episodes,
                outcome.tasks_solved + episodes.tasks_solved,
            )
        write_transcripts(path, outcome.accepted)
        self.metrics.write(
            {
                "step": self.step,
                "round": round_,
                "episodes": outcome.episodes,
                "accepted": len(outcome.accepted),
                "pass_rate": outcome.pass_rate,
                "tasks_solved": outcome.tasks_solved,
            }
        )
        self.say(
            f"sft: rejection round {round_}: {len(outcome.accepted)} of {outcome.episodes} episodes passed "
            f"({outcome.tasks_solved} of {len(tasks)} tasks)"
        )
        return outcome.accepted

    # ---- training ----------------------------------------------------------------------------

    def _train_phase(self, name: str, transcripts: list[Transcript], epochs: int, phase_seed: int) -> None:
        batches = plan_batches(
            len(transcripts),
            self.sft.batch_size,
            epochs,
            seed=self.config.seed * 1009 + phase_seed,
            tokens=[t.tokens for t in transcripts],
            batch_tokens=self.sft.batch_tokens,
        )
        first = self.cursor
        self.cursor += len(batches)
        if self.step >= self.cursor:  # done before a resume
            return
        with self._steps_bar(name, len(batches), self.step - first) as advance:
            for offset, batch in enumerate(batches):
                step = first + offset + 1
                if step <= self.step:
                    continue
                samples = [s for i in batch for s in transcripts[i].samples()]
                stats = self.trainer.step(samples)
                finite_or_raise(stats)
                fault_point("sft_step")
                self.step = step
                record = {"step": step, "phase": name, "transcripts": len(batch)}
                record.update({k: stats[k] for k in ("nll", "loss", "grad_norm", "lr", "train_tokens", "train_time_s")})
                self.metrics.write(record)
                advance(f"nll {stats['nll']:.3f}")
                if step % self.sft.checkpoint_every == 0 or offset == len(batches) - 1:
                    self._checkpoint()

    def _checkpoint(self) -> None:
        save_checkpoint(
            self.sd.checkpoints,
            self.step,
            self.trainer.write_files,
            self.tokenizer,
            self.trainer.state_dict(),
            {"stage": "sft"},
            keep=1,
            extra_files=checkpoint_files(self.config),
        )

    def _sync_engine(self) -> None:
        self.engine.update_weights(self.trainer.named_weights(), version=self.step)

    def _save_model(self) -> None:
        tmp = self.sd.root / ".tmp-model"
        shutil.rmtree(tmp, ignore_errors=True)
        self.trainer.model.save_pretrained(tmp, safe_serialization=True)
        self.tokenizer.save_pretrained(tmp)
        for name, text in checkpoint_files(self.config).items():
            (tmp / name).write_text(text)
        tmp.rename(self.sd.model)

    # ---- evaluation and display --------------------------------------------------------------

    def _evaluate(self, heldout, label: str) -> EvalResult:
        with self._episodes_bar(label, len(heldout)) as advance:
            result = evaluate(
                self.engine,
                self.tokenizer,
                heldout,
                self.config.train.eval_max_new_tokens or self.config.rollout.max_new_tokens,
                self.config.rollout.system_prompt,
                on_progress=lambda n: [advance() for _ in range(n)],
                agent=self.config.agent,
            )
        self.say(f"sft: {label}: held-out pass@1 {result.overall:.3f} ({len(heldout)} items)")
        return result

    def _progress(self):
        return progress_bar(
            TextColumn("[bold]{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            TextColumn("{task.fields[info]}"),
            out=self.console,
            transient=True,
        )

    def _episodes_bar(self, label: str, total: int):
        return _Bar(self._progress(), label, total, 0)

    def _steps_bar(self, label: str, total: int, done: int):
        return _Bar(self._progress(), f"sft {label}", total, done)


class _Bar:
    """A progress bar as a context manager whose value is `advance(info="")`. Where the console
    is not a terminal (a log file), one line says what the bar did when it ends."""

    def __init__(self, progress, label: str, total: int, done: int) -> None:
        self.progress, self.label = progress, label
        self.task = progress.add_task(label, total=total, completed=max(done, 0), info="")
        self.started = time.perf_counter()

    def __enter__(self):
        self.progress.__enter__()

        def advance(info=None):
            self.progress.advance(self.task, 1)
            if isinstance(info, str):  # episode callbacks pass their trajectory: not shown
                self.progress.update(self.task, info=info)

        return advance

    def __exit__(self, *exc) -> None:
        self.progress.__exit__(*exc)
        console = self.progress.console
        if not draws_live(console):
            task = self.progress.tasks[self.task]
            line = f"{self.label}: {task.completed:.0f}/{task.total:.0f} in {time.perf_counter() - self.started:.0f} s"
            console.print(line + (f"  {task.fields['info']}" if task.fields.get("info") else ""), highlight=False)


def sft_bf16_autocast(setting, device) -> bool:
    """`[sft] bf16_autocast` resolved: "auto" is on for CUDA and for CPUs whose bf16 matmuls are
    fast (an emulated bf16 is hundreds of times slower than fp32)."""
    if setting != "auto":
        return bool(setting)
    return str(device).startswith("cuda") or bf16_is_fast()


def plan_batches(
    n: int, batch_size: int, epochs: int, seed: int, tokens: list[int] | None = None, batch_tokens: int | None = None
) -> list[list[int]]:
    """Each epoch a seeded shuffle of the n transcripts cut into batches (the last may be
    smaller): the same plan every time, so a resumed stage trains on the same batches. With
    `batch_tokens`, a batch takes transcripts in that order while their `tokens` fit the budget
    (a longer transcript makes a batch of its own) instead of `batch_size` of them."""
    batches = []
    for epoch in range(epochs):
        order = list(range(n))
        random.Random(seed * 100_003 + epoch).shuffle(order)
        if batch_tokens is None:
            batches += [order[i : i + batch_size] for i in range(0, n, batch_size)]
        else:
            batches += _cut_by_tokens(order, tokens, batch_tokens)
    return batches


def _cut_by_tokens(order: list[int], tokens: list[int], budget: int) -> list[list[int]]:
    batches, current, used = [], [], 0
    for index in order:
        if current and used + tokens[index] > budget:
            batches.append(current)
            current, used = [], 0
        current.append(index)
        used += tokens[index]
    return batches + ([current] if current else [])


def _load_eval(path: Path) -> EvalResult | None:
    return load_eval(path) if path.is_file() else None


def sft(config_path: Path | None, out: Path, resume: bool = False, console=None) -> dict:
    """`posttrain sft CONFIG --out DIR [--resume]`: only the warm start, into DIR."""
    from posttrain.pipeline.training_run import check_run

    return sft_checked(check_run(config_path, out, resume, needs_sft=True), console=console)


def sft_checked(checked, console=None) -> dict:
    """`sft` after `check_run` passed (a CheckedRun): from here on DIR is written."""
    from posttrain.console import line_printer
    from posttrain.models.loading import load_tokenizer
    from posttrain.pipeline.training_run import set_torch_threads_and_seed, start_run

    run = checked.run
    out, resume = run.run_dir.root, run.resume
    start_run(run)
    set_torch_threads_and_seed(run.config)
    mixture = checked.gated(line_printer(console))
    tokenizer = load_tokenizer(run.config.model.name)
    outcome = run_sft_stage(run.config, out, mixture, tokenizer, run.config_dir, resume=resume, console=console)
    summary = {
        "model": f"hf:{outcome.model_dir}",
        "steps": outcome.steps,
        "wall_s": outcome.wall_s,
        "heldout_pass_at_1": {
            name: ({"overall": r.overall, **(r.per_family or r.per_domain)} if r else None)
            for name, r in (("base", outcome.base), ("sft", outcome.sft))
        },
    }
    write_json_atomic(out / "summary.json", summary)
    return summary
