"""DPO: posttrain's loss and step time against TRL's `DPOTrainer`, on the same pairs and model.

Both sides start from the same weights (`load_model(MODEL, seed=0)`), train on the same
preference pairs in the same order (TRL's sampler replaced by a sequential one), with the same
batch size, beta, learning rate (constant, no warm-up), AdamW, gradient clipping and torch
thread count, in fp32. The pairs are conversational, so both render them with the model's chat
template. For each of the first steps the report gives both losses (before that step's update)
and their largest difference; a step is the loss, backward and optimizer update of one batch
(posttrain: PreferenceTrainer.step; TRL: from on_step_begin to on_step_end).

    python benchmarks/dpo_vs_trl.py [--model tiny-llama|smollm2-135m] [--pairs 16] [--batch-size 4] [--steps 4]

Each side runs in its own subprocess of this script, posttrain first. Progress goes to stderr;
stdout gets one JSON object:

    {"max_loss_diff": D, "posttrain_step_s": A, "trl_step_s": B, "ratio": A / B, ...}

with A and B the median step times after `--warmup` steps. Needs the `bench` extra (trl, datasets).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SIDES = ("posttrain", "trl")
_SUBJECTS = ["a cat", "the sea", "a bicycle", "winter", "a library", "bread", "a violin", "the moon", "a garden"]


def log(message: str) -> None:
    print(f"[dpo_vs_trl {time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)


def preference_rows(count: int) -> list[dict]:
    """`count` conversational pairs of different lengths: a short kind answer is chosen over a
    longer off-topic one, or the other way round, so both length orders occur."""
    rows = []
    for i in range(count):
        subject = _SUBJECTS[i % len(_SUBJECTS)]
        short = f"{subject.capitalize()} is lovely."
        long = f"I would rather not talk about {subject}; " + "let me tell you about numbers instead. " * (1 + i % 3)
        chosen, rejected = (short, long) if i % 2 == 0 else (long, short)
        prompt = [{"role": "user", "content": f"Say something about {subject} (question {i})."}]
        rows.append(
            {
                "prompt": prompt,
                "chosen": [{"role": "assistant", "content": chosen}],
                "rejected": [{"role": "assistant", "content": rejected}],
            }
        )
    return rows


def _setup(threads: int) -> None:
    import torch

    torch.set_num_threads(threads)
    torch.manual_seed(0)


def _summary(side: str, losses: list[float], step_s: list[float], warmup: int, extra: dict) -> dict:
    return {
        "side": side,
        "losses": losses,
        "step_s_all": step_s,
        "median_step_s": statistics.median(step_s[warmup:]),
        **extra,
    }


def _batches(args, items: list) -> list[list]:
    """The items of each step: consecutive runs of batch_size, wrapping round; TRL gets them in
    this order too."""
    return [
        [items[(step * args.batch_size + k) % len(items)] for k in range(args.batch_size)] for step in range(args.steps)
    ]


def run_posttrain(args) -> dict:
    _setup(args.threads)
    from posttrain.models.loading import load_model, load_tokenizer

    tokenizer = load_tokenizer(args.model)
    model = load_model(args.model, seed=0)
    rows = preference_rows(args.pairs)
    step = (
        _posttrain_sft(args, tokenizer, model, rows)
        if args.objective == "sft"
        else _posttrain_dpo(args, tokenizer, model, rows)
    )
    losses, step_s = [], []
    for number, batch in enumerate(_batches(args, list(range(len(rows)))), start=1):
        started = time.perf_counter()
        losses.append(step(batch))
        step_s.append(time.perf_counter() - started)
        log(f"posttrain step {number}: loss {losses[-1]:.6f}, {step_s[-1]:.3f} s")
    return _summary("posttrain", losses, step_s, args.warmup, {})


def _posttrain_dpo(args, tokenizer, model, rows):
    from posttrain.config import PreferenceConfig
    from posttrain.pipeline.preference.pairs import PreferenceRow, tokenize_pair
    from posttrain.train.preference_trainer import PreferenceTrainer

    pairs = [
        tokenize_pair(tokenizer, PreferenceRow(str(i), r["prompt"], r["chosen"], r["rejected"]))
        for i, r in enumerate(rows)
    ]
    settings = PreferenceConfig(data=["(benchmark)"], beta=args.beta, lr=args.lr, batch_size=args.batch_size)
    trainer = PreferenceTrainer(model, settings, pad_id=tokenizer.pad_token_id)

    def step(batch: list[int]) -> float:
        chosen = [pairs[i] for i in batch]
        prompts, good, bad = ([getattr(p, f) for p in chosen] for f in ("prompt_ids", "chosen_ids", "rejected_ids"))
        return trainer.step(prompts, good, bad)["loss"]

    return step


def _posttrain_sft(args, tokenizer, model, rows):
    """`[sft] chat_data`'s path: each conversation (the prompt, then the chosen reply) rendered
    whole, trained on its assistant turn, by the SFT stage's trainer (loss nll)."""
    from posttrain.config import AlgorithmConfig, OptimConfig
    from posttrain.pipeline.sft.conversations import conversation_transcript
    from posttrain.train.trainer import PolicyTrainer

    chats = [
        conversation_transcript(tokenizer, str(i), {"messages": r["prompt"] + r["chosen"]}) for i, r in enumerate(rows)
    ]
    optim = OptimConfig(lr=args.lr, warmup_steps=0, grad_clip=1.0, micro_batch_tokens=1 << 16)
    algorithm = AlgorithmConfig(loss="nll", tis_cap=None, dynamic_sampling=False)
    trainer = PolicyTrainer(model, optim, algorithm, 1.0, pad_id=tokenizer.pad_token_id)
    return lambda batch: trainer.step([s for i in batch for s in chats[i].samples()])["loss"]


def run_trl(args) -> dict:
    _setup(args.threads)
    import torch
    import trl
    from datasets import Dataset
    from transformers import TrainerCallback
    from transformers.utils import logging as hf_logging

    from posttrain.models.loading import load_model, load_tokenizer

    hf_logging.set_verbosity_error()
    rows = preference_rows(args.pairs)
    ordered = [rows[i] for batch in _batches(args, list(range(len(rows)))) for i in batch]
    if args.objective == "sft":  # prompt-completion rows: TRL trains on the completion only
        ordered = [{"prompt": r["prompt"], "completion": r["chosen"]} for r in ordered]
    losses: list[float] = []
    step_s: list[float] = []
    base, config, extra = _trl_trainer(args)

    class SameOrder(base):
        def _get_train_sampler(self, *_, **__):
            return torch.utils.data.SequentialSampler(self.train_dataset)

        def compute_loss(self, model, inputs, return_outputs=False, num_items_in_batch=None):
            loss = super().compute_loss(model, inputs, return_outputs, num_items_in_batch)
            if model.training:
                losses.append((loss[0] if isinstance(loss, tuple) else loss).item())
            return loss

    class StepTimer(TrainerCallback):
        def on_step_begin(self, *_, **__):
            self.started = time.perf_counter()

        def on_step_end(self, *_, **__):
            step_s.append(time.perf_counter() - self.started)
            log(f"trl step {len(step_s)}: loss {losses[-1]:.6f}, {step_s[-1]:.3f} s")

    if args.objective == "dpo":
        extra["ref_model"] = load_model(args.model, seed=0)  # the same starting weights, frozen
    trainer = SameOrder(
        model=load_model(args.model, seed=0),
        args=config,
        train_dataset=Dataset.from_list(ordered),
        processing_class=load_tokenizer(args.model),
        callbacks=[StepTimer()],
        **extra,
    )
    trainer.train()
    return _summary("trl", losses, step_s, args.warmup, {"trl_version": trl.__version__})


def _trl_trainer(args):
    """TRL's trainer class for the objective, its config, and extra constructor arguments."""
    from trl import DPOConfig, DPOTrainer, SFTConfig, SFTTrainer

    common = dict(
        output_dir=tempfile.mkdtemp(prefix="dpo_vs_trl_"),
        use_cpu=True,
        bf16=False,
        fp16=False,
        per_device_train_batch_size=args.batch_size,
        gradient_accumulation_steps=1,
        max_steps=args.steps,
        learning_rate=args.lr,
        lr_scheduler_type="constant",
        warmup_steps=0,
        weight_decay=0.0,
        max_grad_norm=1.0,
        max_length=1024,
        logging_steps=1,
        save_strategy="no",
        report_to=[],
        seed=0,
        dataloader_num_workers=0,
        disable_tqdm=True,
    )
    if args.objective == "sft":
        return SFTTrainer, SFTConfig(**common, completion_only_loss=True, packing=False), {}
    return DPOTrainer, DPOConfig(**common, beta=args.beta, loss_type=["sigmoid"]), {}


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", default="tiny-llama", help="tiny-llama or smollm2-135m (or hf:DIR)")
    parser.add_argument(
        "--objective",
        choices=("dpo", "sft"),
        default="dpo",
        help="dpo: DPOTrainer; sft: SFTTrainer on the chosen replies",
    )
    parser.add_argument("--pairs", type=int, default=16)
    parser.add_argument("--batch-size", type=int, default=4)
    parser.add_argument("--steps", type=int, default=4, help="optimizer steps on each side")
    parser.add_argument("--warmup", type=int, default=1, help="first steps left out of the step time")
    parser.add_argument("--beta", type=float, default=0.1)
    parser.add_argument("--lr", type=float, default=1e-5)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--out", type=Path, default=None, help="also write the JSON report here")
    parser.add_argument("--only", choices=SIDES, action="append", help="run only this side (repeatable)")
    parser.add_argument("--side", choices=SIDES, help=argparse.SUPPRESS)
    parser.add_argument("--side-out", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.warmup >= args.steps:
        parser.error("--warmup must be below --steps: no step would be timed")
    return args


def _forwarded(args) -> list[str]:
    return [
        *(
            "--model",
            args.model,
            "--objective",
            args.objective,
            "--pairs",
            str(args.pairs),
            "--batch-size",
            str(args.batch_size),
        ),
        *("--steps", str(args.steps), "--warmup", str(args.warmup), "--beta", repr(args.beta)),
        *("--lr", repr(args.lr), "--threads", str(args.threads)),
    ]


_CHILD_ENV = {"TOKENIZERS_PARALLELISM": "false", "HF_HUB_OFFLINE": "1", "HF_HUB_DISABLE_PROGRESS_BARS": "1"}


def run_side_subprocess(side: str, args) -> dict:
    """One side in a fresh process (no allocator, RNG or thread state shared); its stdout goes
    to our stderr, so only the final JSON reaches stdout."""
    log(f"running the {side} side")
    env = {**_CHILD_ENV, "HF_DATASETS_DISABLE_PROGRESS_BARS": "1", **os.environ, "OMP_NUM_THREADS": str(args.threads)}
    with tempfile.TemporaryDirectory(prefix="dpo_vs_trl_") as tmp:
        out = Path(tmp) / f"{side}.json"
        script = str(Path(__file__).resolve())
        code = subprocess.call(
            [sys.executable, script, *_forwarded(args), "--side", side, "--side-out", str(out)],
            env=env,
            stdout=sys.stderr,
            cwd=REPO,
        )
        if code != 0 or not out.is_file():
            raise SystemExit(f"dpo_vs_trl: the {side} side failed (exit {code})")
        return json.loads(out.read_text())


def combine(args, results: dict[str, dict]) -> dict:
    import torch

    pt, tr = results.get("posttrain"), results.get("trl")
    report: dict = {
        "objective": args.objective,
        "model": args.model,
        "pairs": args.pairs,
        "batch_size": args.batch_size,
        "steps": args.steps,
    }
    report.update(beta=args.beta, lr=args.lr, warmup_steps_untimed=args.warmup, torch_threads=args.threads)
    for name, side in (("posttrain", pt), ("trl", tr)):
        if side:
            report[f"{name}_losses"] = side["losses"]
            report[f"{name}_step_s"] = side["median_step_s"]
            report[f"{name}_step_s_all"] = side["step_s_all"]
    if pt and tr:
        diffs = [abs(a - b) for a, b in zip(pt["losses"], tr["losses"], strict=True)]
        report["loss_diff_per_step"] = diffs
        report["max_loss_diff"] = max(diffs)
        report["losses_agree_1e-4"] = max(diffs) <= 1e-4
        report["ratio"] = pt["median_step_s"] / tr["median_step_s"]
        report["trl_version"] = tr["trl_version"]
    report["torch_version"] = torch.__version__
    return report


def main(argv=None) -> int:
    from posttrain.console import emit_benchmark

    args = parse_args(argv)
    if args.side:  # one side, in this subprocess
        train = {"posttrain": run_posttrain, "trl": run_trl}[args.side]
        args.side_out.write_text(json.dumps(train(args)))
    else:
        log(
            f"{args.objective}: model {args.model}, {args.pairs} pairs, "
            f"batches of {args.batch_size}, {args.steps} steps"
        )
        sides = [side for side in SIDES if not args.only or side in args.only]
        emit_benchmark(combine(args, {side: run_side_subprocess(side, args) for side in sides}), args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
