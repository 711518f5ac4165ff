"""GRPO step time: posttrain vs TRL's `GRPOTrainer`, on CPU, side by side in one run.

Both sides run the same model, the same prompts (the quickstart's domains), the same group size,
sampling temperature, completion budget, learning rate and seed, in fp32, without a KL term or a
reference model, with one optimizer step per generation batch and the same torch thread count.
A step is everything from "here are the prompts" to "the policy is updated": generation, scoring,
the loss, backward, the optimizer step (and, for posttrain, the weight sync into its engine).

    python benchmarks/grpo_vs_trl.py [--prompts 4] [--group-size 8] [--max-tokens 32] [--steps 3]

Each side runs in its own subprocess of this script (one after the other, posttrain first), so
neither inherits the other's allocator, RNG or thread state. Progress goes to stderr; stdout gets
one JSON object:

    {"posttrain_step_s": A, "trl_step_s": B, "ratio": A / B, ...}

where A and B are the median times of the measured steps (after `--warmup` untimed steps).
Needs the `bench` extra (trl, datasets).
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
import tomllib
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
QUICKSTART = REPO / "examples" / "quickstart.toml"
SIDES = ("posttrain", "trl")


def log(message: str) -> None:
    print(f"[grpo_vs_trl {time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)


# --------------------------------------------------------------------------------------------
# Shared set-up: the same config, tasks and model on both sides.
# --------------------------------------------------------------------------------------------


def bench_config(args):
    """The quickstart config with the benchmark's settings on top."""
    from posttrain.config import parse_config

    data = tomllib.loads(QUICKSTART.read_text())
    data["seed"] = args.seed
    data["threads"] = args.threads
    data["model"] = {"name": args.model, "dtype": "float32"}
    data["engine"] = {"backend": args.engine}
    data["rollout"].update(
        prompts_per_step=args.prompts,
        group_size=args.group_size,
        max_new_tokens=args.max_tokens,
        temperature=args.temperature,
    )
    data["algorithm"].update(dynamic_sampling=False, kl_coef=0.0, updates_per_batch=1)
    data["optim"].update(lr=args.lr, warmup_steps=0, activation_checkpointing=False, bf16_autocast=False)
    if args.micro_batch_tokens:
        data["optim"]["micro_batch_tokens"] = args.micro_batch_tokens
    data["train"]["steps"] = args.warmup + args.steps
    return parse_config(data, QUICKSTART)


def step_tasks(config, total_steps: int):
    """The prompts of steps 1..total_steps, drawn exactly as `posttrain train` draws them."""
    from posttrain.pipeline.build import build_mixture

    mixture = build_mixture(config, QUICKSTART.parent)
    return [mixture.sample_step(step, config.rollout.prompts_per_step) for step in range(1, total_steps + 1)]


def _setup_threads(threads: int) -> None:
    import torch

    torch.set_num_threads(threads)


def _summary(side: str, step_s: list[float], warmup: int, extra: dict) -> dict:
    measured = step_s[warmup:]
    return {
        "side": side,
        "step_s_all": step_s,
        "step_s_measured": measured,
        "median_step_s": statistics.median(measured),
        **extra,
    }


# --------------------------------------------------------------------------------------------
# posttrain
# --------------------------------------------------------------------------------------------


def run_posttrain(args) -> dict:
    _setup_threads(args.threads)
    import torch

    from posttrain.engine.factory import build_engine
    from posttrain.models.loading import load_tokenizer
    from posttrain.pipeline.build import load_policy_pair
    from posttrain.pipeline.driver import rl_step
    from posttrain.pipeline.inline_rollouts import InlineRollouts
    from posttrain.train.trainer import PolicyTrainer

    config = bench_config(args)
    tasks_by_step = step_tasks(config, config.train.steps)
    torch.manual_seed(config.seed)
    trainer_model, engine_model = load_policy_pair(config)
    tokenizer = load_tokenizer(config.model.name)
    trainer = PolicyTrainer(
        trainer_model, config.optim, config.algorithm, config.rollout.temperature, pad_id=tokenizer.pad_token_id
    )
    engine = build_engine(config, engine_model, tokenizer)
    rollouts = InlineRollouts(config, engine, tokenizer, draw_tasks=lambda step: tasks_by_step[step - 1])

    step_s, rollout_s, train_s, other_s, rewards, lengths, completions = [], [], [], [], [], [], []
    for step in range(1, len(tasks_by_step) + 1):
        started = time.perf_counter()
        record, groups, _ = rl_step(config, rollouts, trainer, step)
        elapsed = time.perf_counter() - started
        step_s.append(elapsed)
        rollout_s.append(record["rollout_s"])
        train_s.append(record.get("train_time_s", 0.0))
        other_s.append(elapsed - record["rollout_s"] - record.get("train_time_s", 0.0))
        rewards.append(record["reward_mean"])
        lengths.append(record["completion_len_mean"])
        completions.append(sum(len(g.completions) for g in groups))
        label = "warm-up" if step <= args.warmup else "measured"
        log(
            f"posttrain step {step} ({label}): {elapsed:.2f} s (generate {record['rollout_s']:.2f} s, "
            f"train {record.get('train_time_s', 0.0):.2f} s), reward {record['reward_mean']:.3f}, "
            f"mean completion {record['completion_len_mean']:.1f} tokens"
        )
    return _summary(
        "posttrain",
        step_s,
        args.warmup,
        {
            "generate_s_all": rollout_s,
            "train_s_all": train_s,
            "score_and_sync_s_all": other_s,
            "reward_mean_all": rewards,
            "completion_len_mean_all": lengths,
            "completions_per_step": completions,
            "micro_batch_tokens": config.optim.micro_batch_tokens,
            "task_ids": [[t.id for t in tasks] for tasks in tasks_by_step],
        },
    )


# --------------------------------------------------------------------------------------------
# TRL
# --------------------------------------------------------------------------------------------


def run_trl(args) -> dict:
    _setup_threads(args.threads)
    import trl
    from datasets import Dataset
    from transformers import TrainerCallback
    from transformers.utils import logging as hf_logging
    from trl import GRPOConfig, GRPOTrainer

    from posttrain.models.loading import load_model, load_tokenizer
    from posttrain.tasks.verifiers import score

    hf_logging.set_verbosity_error()
    config = bench_config(args)
    total_steps = config.train.steps
    tasks_by_step = step_tasks(config, total_steps)
    tasks = [t for step in tasks_by_step for t in step]
    system_prompt = config.rollout.system_prompt
    dataset = Dataset.from_list([{"prompt": t.messages(system_prompt), "task_index": i} for i, t in enumerate(tasks)])

    reward_calls: list[float] = []

    def posttrain_reward(prompts, completions, task_index, **_):
        started = time.perf_counter()
        values = []
        for completion, index in zip(completions, task_index):
            text = completion[-1]["content"] if isinstance(completion, list) else completion
            values.append(score(text, tasks[index]).value)
        reward_calls.append(time.perf_counter() - started)
        return values

    batch = args.prompts * args.group_size
    output_dir = tempfile.mkdtemp(prefix="grpo_vs_trl_")
    grpo_args = GRPOConfig(
        output_dir=output_dir,
        use_cpu=True,
        use_vllm=False,
        bf16=False,
        fp16=False,
        seed=config.seed,
        data_seed=config.seed,
        # One generation batch = n_prompts x group_size completions = one optimizer step.
        per_device_train_batch_size=batch,
        gradient_accumulation_steps=1,
        steps_per_generation=1,
        num_generations=args.group_size,
        num_iterations=1,
        max_steps=total_steps,
        shuffle_dataset=False,
        max_completion_length=config.rollout.max_new_tokens,
        temperature=config.rollout.temperature,
        top_p=config.rollout.top_p,
        top_k=config.rollout.top_k,
        # The same objective as posttrain's: GRPO advantages (group mean and std), clipped ratio with
        # posttrain's clip range, token-mean over the batch (TRL's "dapo" loss), no KL.
        beta=0.0,
        scale_rewards="group",
        loss_type="dapo",
        epsilon=config.algorithm.clip_low,
        epsilon_high=config.algorithm.clip_high,
        learning_rate=config.optim.lr,
        lr_scheduler_type="constant",
        warmup_steps=0,
        weight_decay=config.optim.weight_decay,
        adam_beta1=config.optim.betas[0],
        adam_beta2=config.optim.betas[1],
        max_grad_norm=config.optim.grad_clip,
        gradient_checkpointing=config.optim.activation_checkpointing,  # TRL defaults to True; posttrain to False
        logging_strategy="no",
        save_strategy="no",
        eval_strategy="no",
        report_to=[],
        disable_tqdm=True,
        dataloader_num_workers=0,
        log_completions=False,
    )

    tokenizer = load_tokenizer(config.model.name)
    model = load_model(config.model.name, "float32", seed=config.seed)
    trainer = GRPOTrainer(
        model=model,
        reward_funcs=posttrain_reward,
        args=grpo_args,
        train_dataset=dataset,
        processing_class=tokenizer,
    )

    # Time TRL's generation inside its step (wraps the instance's method; behaviour unchanged).
    generate_s: list[float] = []
    original_generate = trainer._generate_single_turn

    def timed_generate(*a, **kw):
        started = time.perf_counter()
        out = original_generate(*a, **kw)
        generate_s.append(time.perf_counter() - started)
        return out

    trainer._generate_single_turn = timed_generate

    class StepTimer(TrainerCallback):
        def __init__(self):
            self.started = None
            self.step_s: list[float] = []
            self.rewards: list[float] = []
            self.lengths: list[float] = []

        def on_step_begin(self, args_, state, control, **kw):
            self.started = time.perf_counter()

        def on_step_end(self, args_, state, control, **kw):
            elapsed = time.perf_counter() - self.started
            self.step_s.append(elapsed)
            metrics = trainer._metrics["train"]
            reward = metrics.get("reward", [float("nan")])[-1]
            length = metrics.get("completions/mean_length", [float("nan")])[-1]
            self.rewards.append(float(reward))
            self.lengths.append(float(length))
            step = len(self.step_s)
            label = "warm-up" if step <= args.warmup else "measured"
            gen = generate_s[-1] if generate_s else float("nan")
            log(
                f"trl step {step} ({label}): {elapsed:.2f} s (generate {gen:.2f} s), reward {reward:.3f}, "
                f"mean completion {length:.1f} tokens"
            )

    timer = StepTimer()
    trainer.add_callback(timer)
    trainer.train()
    if len(timer.step_s) != total_steps:
        raise RuntimeError(f"TRL ran {len(timer.step_s)} optimizer steps, expected {total_steps}")
    return _summary(
        "trl",
        timer.step_s,
        args.warmup,
        {
            "generate_s_all": generate_s,
            "train_s_all": [s - g for s, g in zip(timer.step_s, generate_s)],
            "reward_fn_s_all": reward_calls,
            "reward_mean_all": timer.rewards,
            "completion_len_mean_all": timer.lengths,
            "trl_version": trl.__version__,
            "trl_optim": str(grpo_args.optim),
            "trl_generation_batch_size": grpo_args.generation_batch_size,
            "trl_steps_per_generation": grpo_args.steps_per_generation,
            "task_ids": [[t.id for t in step] for step in tasks_by_step],
        },
    )


# --------------------------------------------------------------------------------------------
# Driver
# --------------------------------------------------------------------------------------------


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", default="smollm2-135m", help="posttrain model spec (default smollm2-135m)")
    parser.add_argument(
        "--engine",
        default="hf",
        choices=("hf", "builtin"),
        help="posttrain's rollout engine (default hf: the same transformers generation TRL uses)",
    )
    parser.add_argument("--prompts", type=int, default=4, help="prompts per step (default 4)")
    parser.add_argument("--group-size", type=int, default=8, help="completions per prompt (default 8)")
    parser.add_argument("--max-tokens", type=int, default=32, help="max completion tokens (default 32)")
    parser.add_argument("--steps", type=int, default=3, help="measured steps (default 3)")
    parser.add_argument("--warmup", type=int, default=1, help="untimed warm-up steps before them (default 1)")
    parser.add_argument("--temperature", type=float, default=0.7)
    parser.add_argument("--lr", type=float, default=1e-5)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--threads",
        type=int,
        default=None,
        help="torch threads on both sides (default: $OMP_NUM_THREADS, else torch's default)",
    )
    parser.add_argument(
        "--micro-batch-tokens",
        type=int,
        default=None,
        help="posttrain's optim.micro_batch_tokens (default: the quickstart's)",
    )
    parser.add_argument("--only", choices=SIDES, action="append", help="run only this side (repeatable)")
    parser.add_argument("--out", type=Path, default=None, help="also write the JSON to this file")
    parser.add_argument("--side", choices=SIDES, help=argparse.SUPPRESS)
    parser.add_argument("--side-out", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.group_size < 2:
        parser.error("--group-size must be at least 2 (GRPO needs a group; TRL refuses fewer)")
    if min(args.prompts, args.max_tokens, args.steps) < 1 or args.warmup < 0:
        parser.error("--prompts, --max-tokens and --steps must be >= 1, --warmup >= 0")
    if args.threads is None:
        env = os.environ.get("OMP_NUM_THREADS", "")
        if env.isdigit() and int(env) > 0:
            args.threads = int(env)
        else:
            import torch

            args.threads = torch.get_num_threads()
    return args


def _forwarded(args) -> list[str]:
    out = [
        "--model",
        args.model,
        "--engine",
        args.engine,
        "--prompts",
        str(args.prompts),
        "--group-size",
        str(args.group_size),
        "--max-tokens",
        str(args.max_tokens),
        "--steps",
        str(args.steps),
        "--warmup",
        str(args.warmup),
        "--temperature",
        repr(args.temperature),
        "--lr",
        repr(args.lr),
        "--seed",
        str(args.seed),
        "--threads",
        str(args.threads),
    ]
    if args.micro_batch_tokens:
        out += ["--micro-batch-tokens", str(args.micro_batch_tokens)]
    return out


def run_side_subprocess(side: str, args) -> dict:
    env = dict(os.environ)
    env["OMP_NUM_THREADS"] = str(args.threads)
    env.setdefault("TOKENIZERS_PARALLELISM", "false")
    env.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
    env.setdefault("HF_HUB_OFFLINE", "1")
    with tempfile.TemporaryDirectory(prefix="grpo_vs_trl_") as tmp:
        out = Path(tmp) / f"{side}.json"
        cmd = [sys.executable, str(Path(__file__).resolve()), *_forwarded(args), "--side", side, "--side-out", str(out)]
        log(f"running the {side} side")
        started = time.perf_counter()
        # The child's stdout goes to our stderr: only the final JSON reaches stdout.
        proc = subprocess.run(cmd, env=env, stdout=sys.stderr, stderr=sys.stderr, cwd=REPO)
        if proc.returncode != 0 or not out.is_file():
            raise SystemExit(f"grpo_vs_trl: the {side} side failed (exit {proc.returncode})")
        result = json.loads(out.read_text())
        result["process_wall_s"] = time.perf_counter() - started
        return result


def combine(args, results: dict[str, dict]) -> dict:
    import torch

    report: dict = {}
    pt, tr = results.get("posttrain"), results.get("trl")
    if pt:
        report["posttrain_step_s"] = pt["median_step_s"]
    if tr:
        report["trl_step_s"] = tr["median_step_s"]
    if pt and tr:
        report["ratio"] = pt["median_step_s"] / tr["median_step_s"]
        report["same_prompts"] = pt["task_ids"] == tr["task_ids"]
    report.update(
        model=args.model,
        posttrain_engine=args.engine,
        n_prompts=args.prompts,
        group_size=args.group_size,
        completions_per_step=args.prompts * args.group_size,
        max_completion_length=args.max_tokens,
        temperature=args.temperature,
        lr=args.lr,
        seed=args.seed,
        warmup_steps=args.warmup,
        steps_measured=args.steps,
        torch_threads=args.threads,
        torch_version=torch.__version__,
    )
    if tr:
        report["trl_version"] = tr["trl_version"]
    for side, result in results.items():
        report[f"{side}_step_s_measured"] = result["step_s_measured"]
    for side, result in results.items():
        detail = {k: v for k, v in result.items() if k not in ("side", "task_ids", "median_step_s", "trl_version")}
        measured = slice(args.warmup, None)
        for key in ("generate_s_all", "train_s_all"):
            if key in result:
                detail[key.replace("_all", "_median")] = statistics.median(result[key][measured])
        report[f"{side}_detail"] = detail
    return report


def main(argv=None) -> int:
    args = parse_args(argv)
    if args.side:
        result = run_posttrain(args) if args.side == "posttrain" else run_trl(args)
        args.side_out.write_text(json.dumps(result))
        return 0
    sides = [s for s in SIDES if not args.only or s in args.only]
    log(
        f"model {args.model}, {args.prompts} prompts x {args.group_size} completions, <= {args.max_tokens} tokens, "
        f"{args.warmup} warm-up + {args.steps} measured steps, {args.threads} torch threads"
    )
    results = {side: run_side_subprocess(side, args) for side in sides}
    report = combine(args, results)
    from posttrain.console import emit_benchmark

    emit_benchmark(report, args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
