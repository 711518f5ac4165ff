"""The trainer on a GPU, checked in one prepared run (scripts/gpu_check.sh calls this).

Needs only python3 with torch and transformers: the modules it uses (posttrain.train's trainer,
its FSDP2 trainer and process group, the hf engine, posttrain.cpu) import without posttrain's
other dependencies (pydantic, typer, rich), and the repository root is put on sys.path here.
Nothing is downloaded: the model is SmolLM2-135M-shaped (a Llama config: hidden 576, 30 layers,
9 heads, 3 kv heads, intermediate 1536, vocabulary 49152, tied embeddings) with random weights,
and the tokenizer a word-level one built here over that vocabulary (the ids are random: the
costs and the agreement depend on the shapes and the weights, not on the text).

    scripts/gpu_check.sh                              # CUDA, bf16 autocast, SmolLM2-135M shape
    scripts/gpu_check.sh --device cpu --tiny          # the same checks as a dry run on the CPU

Checks, each recorded in the JSON (benchmarks/results/gpu_check.json for CUDA):
    agreement    the loss and its gradient from the same weights and batch: the trainer on the
                 device (bf16 autocast) against the trainer on the CPU in fp32; max abs and
                 relative differences, the gradients' cosine
    train        timed steps on the device: step time (median) and trained tokens/s, peak memory
    generation   the hf engine generating on the device: tokens/s; the trainer's logprobs of its
                 samples against the engine's (logprob_mismatch_max)
    nproc        one step of the FSDP2 trainer as 1 rank under torch.distributed.run (NCCL on
                 CUDA, gloo on the CPU), against the single-process trainer's step
and the machine: GPU name, torch and CUDA versions, the CPU record (posttrain.cpu.describe).
Exits 1 when a check fails (the JSON says which).
"""

from __future__ import annotations

import argparse
import copy
import json
import math
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from types import SimpleNamespace

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import torch  # noqa: E402
from transformers import LlamaConfig, LlamaForCausalLM, PreTrainedTokenizerFast  # noqa: E402

from posttrain import cpu  # noqa: E402
from posttrain.train.device import DEVICE_ENV  # noqa: E402
from posttrain.train.samples import TrainSample  # noqa: E402
from posttrain.train.trainer import PolicyTrainer  # noqa: E402

RESULTS = ROOT / "benchmarks" / "results"
SPECIAL = 3  # ids 0..2: unk, bos, eos (= pad), as SmolLM2 numbers them
# bf16 against fp32 on a random 30-layer model: the loss within 5%, the gradient's direction within
# cos 0.98 (bf16 keeps 8 bits of mantissa; these bound a wrong placement or a lost term, not rounding)
LOSS_REL_TOLERANCE = 0.05
GRAD_COSINE_FLOOR = 0.98


def model_config(tiny: bool) -> LlamaConfig:
    if tiny:
        shape = dict(vocab_size=512, hidden_size=64, intermediate_size=128, num_hidden_layers=2)
        shape |= dict(num_attention_heads=4, num_key_value_heads=2)
    else:  # SmolLM2-135M's
        shape = dict(vocab_size=49152, hidden_size=576, intermediate_size=1536, num_hidden_layers=30)
        shape |= dict(num_attention_heads=9, num_key_value_heads=3)
    return LlamaConfig(
        **shape,
        max_position_embeddings=8192,
        rope_theta=100000.0,
        rms_norm_eps=1e-5,
        tie_word_embeddings=True,
        bos_token_id=1,
        eos_token_id=2,
        pad_token_id=2,
    )


def random_model(config: LlamaConfig, seed: int) -> LlamaForCausalLM:
    """The same fp32 weights on the CPU for the same seed (in every process)."""
    with torch.random.fork_rng():
        torch.manual_seed(seed)
        return LlamaForCausalLM(config).float()


def word_tokenizer(vocab_size: int) -> PreTrainedTokenizerFast:
    """A tokenizer over `vocab_size` made-up words (ids 0..2: <unk>, <s>, </s>): no files."""
    from tokenizers import Tokenizer
    from tokenizers.models import WordLevel
    from tokenizers.pre_tokenizers import WhitespaceSplit

    vocab = {"<unk>": 0, "<s>": 1, "</s>": 2} | {f"w{i}": i for i in range(SPECIAL, vocab_size)}
    inner = Tokenizer(WordLevel(vocab, unk_token="<unk>"))
    inner.pre_tokenizer = WhitespaceSplit()
    return PreTrainedTokenizerFast(
        tokenizer_object=inner, unk_token="<unk>", bos_token="<s>", eos_token="</s>", pad_token="</s>"
    )


def settings(micro_batch_tokens: int, bf16: bool, loss: str = "ppo_clip") -> tuple[SimpleNamespace, SimpleNamespace]:
    """[optim] and [algorithm] as the trainer reads them (posttrain.config's defaults, a GRPO
    step with PPO-clip and TIS), without posttrain.config (pydantic) being importable."""
    optim = SimpleNamespace(
        lr=1e-5,
        weight_decay=0.0,
        betas=(0.9, 0.999),
        grad_clip=1.0,
        warmup_steps=0,
        micro_batch_tokens=micro_batch_tokens,
        bf16_autocast=bf16,
        activation_checkpointing=False,
        shared_prefix=True,
        logprob_chunk_tokens=1024,
    )
    algorithm = SimpleNamespace(
        advantage="grpo",
        normalize_std=True,
        loss=loss,
        clip_low=0.2,
        clip_high=0.28,
        aggregation="token_mean",
        kl_coef=0.0,
        kl_estimator="k3",
        tis_cap=2.0,
        dynamic_sampling=True,
        updates_per_batch=1,
    )
    return optim, algorithm


def random_batch(args, vocab_size: int, seed: int) -> list[TrainSample]:
    """`prompts` groups of `group_size` completions sharing their prompt, random ids, advantages
    spread over each group, engine logprobs at -1 (the mismatch then is the trainer's own)."""
    generator = torch.Generator().manual_seed(seed)

    def ids(n: int) -> list[int]:
        return torch.randint(SPECIAL, vocab_size, (n,), generator=generator).tolist()

    batch = []
    for _ in range(args.prompts):
        prompt = ids(args.prompt_tokens)
        for k in range(args.group_size):
            advantage = (k - (args.group_size - 1) / 2) / max(args.group_size, 1)
            batch.append(TrainSample(prompt, ids(args.completion_tokens), [-1.0] * args.completion_tokens, advantage))
    return batch


def trainer_on(model, device: str, args, bf16: bool, loss: str = "ppo_clip") -> PolicyTrainer:
    optim, algorithm = settings(args.micro_batch_tokens, bf16, loss)
    return PolicyTrainer(copy.deepcopy(model), optim, algorithm, 1.0, pad_id=2, device=device)


def compare(reference: dict[str, torch.Tensor], other: dict[str, torch.Tensor]) -> dict:
    """Max abs and relative differences and the cosine of two gradients (by parameter name)."""
    ref = torch.cat([reference[n].flatten().double().cpu() for n in sorted(reference)])
    oth = torch.cat([other[n].flatten().double().cpu() for n in sorted(reference)])
    diff = (oth - ref).abs()
    return {
        "grad_max_abs_diff": float(diff.max()),
        "grad_max_rel_diff": float((diff / ref.abs().clamp(min=1e-12)).max()),
        "grad_rel_norm_diff": float(diff.norm() / ref.norm().clamp(min=1e-30)),
        "grad_cosine": float(torch.nn.functional.cosine_similarity(ref, oth, dim=0)),
        "grad_norm_reference": float(ref.norm()),
    }


def agreement(model, args, batch) -> dict:
    """The device trainer (bf16 autocast when --bf16) against fp32 on the CPU, same weights. On the
    NLL loss: the first PPO-clip step's loss is -mean(advantage), whatever the model (the ratio
    is 1), while the NLL depends on every logprob."""
    on_cpu = trainer_on(model, "cpu", args, bf16=False, loss="nll")
    on_device = trainer_on(model, args.device, args, bf16=args.bf16, loss="nll")
    gradients = compare(on_cpu.loss_gradient(batch), on_device.loss_gradient(batch))
    cpu_loss = on_cpu.step(batch)["loss"]
    device_loss = on_device.step(batch)["loss"]
    loss_diff = abs(device_loss - cpu_loss)
    report = {
        "loss_cpu_fp32": cpu_loss,
        "loss_device": device_loss,
        "loss_abs_diff": loss_diff,
        "loss_rel_diff": loss_diff / max(abs(cpu_loss), 1e-12),
        **gradients,
    }
    report["ok"] = report["loss_rel_diff"] <= LOSS_REL_TOLERANCE and report["grad_cosine"] >= GRAD_COSINE_FLOOR
    return report


def synchronize(device: str) -> None:
    if device == "cuda":
        torch.cuda.synchronize()


def timed_training(model, args, batch) -> dict:
    trainer = trainer_on(model, args.device, args, bf16=args.bf16)
    if args.device == "cuda":
        torch.cuda.reset_peak_memory_stats()
    times, stats = [], {}
    for index in range(args.warmup + args.steps):
        synchronize(args.device)
        started = time.perf_counter()
        stats = trainer.step(batch)
        synchronize(args.device)
        if index >= args.warmup:
            times.append(time.perf_counter() - started)
    step_s = statistics.median(times)
    report = {
        "steps": args.steps,
        "step_s": step_s,
        "step_s_all": times,
        "train_tokens": stats["train_tokens"],
        "tokens_per_s": stats["train_tokens"] / step_s,
        "loss": stats["loss"],
        "grad_norm": stats["grad_norm"],
        "peak_memory_gb": torch.cuda.max_memory_allocated() / 2**30 if args.device == "cuda" else None,
    }
    report["ok"] = all(math.isfinite(v) for v in (report["loss"], report["grad_norm"]))
    return report


def generation(model, args, tokenizer) -> dict:
    """The hf engine over the model on the device: sampled completions, then one trainer step on
    them (the trainer's logprobs against the engine's)."""
    from posttrain.engine.hf_engine import HFEngine
    from posttrain.engine.interface import GenerationRequest, SamplingParams

    engine = HFEngine(copy.deepcopy(model).to(args.device), tokenizer, max_batch_size=args.prompts * args.group_size)
    generator = torch.Generator().manual_seed(7)
    prompts = [
        torch.randint(SPECIAL, tokenizer.vocab_size, (args.prompt_tokens,), generator=generator).tolist()
        for _ in range(args.prompts)
    ]
    params = SamplingParams(n=args.group_size, temperature=1.0, max_tokens=args.completion_tokens, seed=1)
    requests = [GenerationRequest(str(i), p, params) for i, p in enumerate(prompts)]
    synchronize(args.device)
    started = time.perf_counter()
    completions = engine.generate(requests)
    synchronize(args.device)
    seconds = time.perf_counter() - started
    tokens = sum(len(c.token_ids) for c in completions)
    batch = [
        TrainSample(c.prompt_token_ids, c.token_ids, c.logprobs, advantage=float(k % 2) - 0.5)
        for k, c in enumerate(completions)
        if c.token_ids
    ]
    stats = trainer_on(model, args.device, args, bf16=args.bf16).step(batch)
    report = {
        "engine_device": str(engine.model.device),
        "completions": len(completions),
        "generated_tokens": tokens,
        "seconds": seconds,
        "tokens_per_s": tokens / seconds,
        "logprob_mismatch_max": stats["logprob_mismatch_max"],
        "logprob_mismatch_mean": stats["logprob_mismatch_mean"],
    }
    finite = all(math.isfinite(lp) for c in completions for lp in c.logprobs)
    report["ok"] = tokens > 0 and finite and engine.model.device.type == args.device
    return report


def nproc_step(args, single_loss: float) -> dict:
    """One FSDP2 step as 1 rank under torch.distributed.run, on the launcher's device."""
    with tempfile.TemporaryDirectory() as scratch:
        out = Path(scratch) / "rank.json"
        command = [
            sys.executable,
            "-m",
            "torch.distributed.run",
            "--standalone",
            "--nproc-per-node=1",
            str(Path(__file__).resolve()),
            *_shape_args(args),
            "--rank-step",
            str(out),
        ]
        env = {**os.environ, DEVICE_ENV: args.device, "PYTHONPATH": str(ROOT)}
        started = time.perf_counter()
        proc = subprocess.run(command, env=env, capture_output=True, text=True, timeout=args.nproc_timeout_s)
        seconds = time.perf_counter() - started
        if proc.returncode != 0:
            return {"ok": False, "returncode": proc.returncode, "stderr_tail": proc.stderr[-2000:]}
        rank = json.loads(out.read_text())
    rank["seconds_with_launch"] = seconds
    rank["single_process_loss"] = single_loss
    rank["loss_abs_diff"] = abs(rank["loss"] - single_loss)
    rank["ok"] = rank["backend"] == ("nccl" if args.device == "cuda" else "gloo") and rank["loss_abs_diff"] <= max(
        1e-3, 1e-2 * abs(single_loss)
    )
    return rank


def rank_step(args, out: Path) -> None:
    """Inside torch.distributed.run: join the group as posttrain train --nproc does, step once."""
    import torch.distributed as dist

    from posttrain.train.process_group import backend, join_process_group, leave_process_group
    from posttrain.train.sharded_trainer import ShardedPolicyTrainer

    join_process_group()
    try:
        config = model_config(args.tiny)
        batch = random_batch(args, config.vocab_size, args.seed)
        optim, algorithm = settings(args.micro_batch_tokens, args.bf16)
        trainer = ShardedPolicyTrainer(random_model(config, args.seed), optim, algorithm, 1.0, 2, device=args.device)
        stats = trainer.step(batch)
        record = {
            "backend": backend(),
            "world_size": dist.get_world_size(),
            "loss": stats["loss"],
            "grad_norm": stats["grad_norm"],
            "param_devices": sorted({p.device.type for p in trainer.model.parameters()}),
        }
    finally:
        leave_process_group()
    out.write_text(json.dumps(record))


def machine(device: str) -> dict:
    record = {
        "device": device,
        "torch": torch.__version__,
        "cuda": torch.version.cuda,
        "python": platform.python_version(),
        "cpu": cpu.describe(),
    }
    if device == "cuda":
        props = torch.cuda.get_device_properties(0)
        record["gpu"] = {
            "name": props.name,
            "memory_gb": round(props.total_memory / 2**30, 1),
            "capability": f"{props.major}.{props.minor}",
            "count": torch.cuda.device_count(),
            "bf16_supported": torch.cuda.is_bf16_supported(),
        }
    return record


# the batch's shape, passed on to the rank of the nproc step as well: option -> (default, help)
SHAPE_OPTIONS = {
    "seed": (0, "the weights' and the batch's seed"),
    "prompts": (8, "groups (prompts) in the timed batch"),
    "group_size": (8, "completions per prompt"),
    "prompt_tokens": (64, "tokens per prompt"),
    "completion_tokens": (128, "tokens per completion (and per generation)"),
    "micro_batch_tokens": (8192, "[optim] micro_batch_tokens"),
}


def _shape_args(args) -> list[str]:
    flags = ["--device", args.device]
    for name in SHAPE_OPTIONS:
        flags += [f"--{name.replace('_', '-')}", str(getattr(args, name))]
    return flags + (["--tiny"] if args.tiny else []) + ([] if args.bf16 else ["--no-bf16"])


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", choices=("cuda", "cpu"), default="cuda")
    parser.add_argument("--tiny", action="store_true", help="a 2-layer model, vocabulary 512 (the CPU dry run)")
    parser.add_argument("--no-bf16", dest="bf16", action="store_false", help="fp32 on the device too")
    for name, (default, help_text) in SHAPE_OPTIONS.items():
        parser.add_argument(f"--{name.replace('_', '-')}", type=int, default=default, help=help_text)
    parser.add_argument("--agreement-prompts", type=int, default=2, help="groups in the CPU-against-device batch")
    parser.add_argument("--steps", type=int, default=5, help="timed training steps")
    parser.add_argument("--warmup", type=int, default=1, help="untimed steps first")
    parser.add_argument("--nproc-timeout-s", type=float, default=300.0)
    parser.add_argument("--out", type=Path, default=None, help="default: benchmarks/results/gpu_check[_cpu].json")
    parser.add_argument("--rank-step", type=Path, default=None, help=argparse.SUPPRESS)
    return parser.parse_args(argv)


def main(argv=None) -> int:
    args = parse_args(argv)
    if args.rank_step is not None:
        rank_step(args, args.rank_step)
        return 0
    if args.device == "cuda" and not torch.cuda.is_available():
        print(f"gpu_check: --device cuda, but torch {torch.__version__} sees no CUDA GPU here", file=sys.stderr)
        return 2
    out = args.out or RESULTS / ("gpu_check.json" if args.device == "cuda" else "gpu_check_cpu.json")
    started = time.perf_counter()
    config = model_config(args.tiny)
    model = random_model(config, args.seed)
    tokenizer = word_tokenizer(config.vocab_size)
    batch = random_batch(args, config.vocab_size, args.seed)
    small = random_batch(SimpleNamespace(**{**vars(args), "prompts": args.agreement_prompts}), config.vocab_size, 1)

    def say(what: str) -> None:
        print(f"gpu_check: {what} ({time.perf_counter() - started:.0f}s)", file=sys.stderr, flush=True)

    report = {"machine": machine(args.device), "model": config.to_diff_dict(), "bf16_autocast": args.bf16}
    report["shape"] = {k: getattr(args, k) for k in ("prompts", "group_size", "prompt_tokens", "completion_tokens")}
    report["agreement"] = agreement(model, args, small)
    say("agreement done")
    report["train"] = timed_training(model, args, batch)
    say("timed steps done")
    report["generation"] = generation(model, args, tokenizer)
    say("generation done")
    single_loss = trainer_on(random_model(config, args.seed), args.device, args, bf16=args.bf16).step(batch)["loss"]
    report["nproc"] = nproc_step(args, single_loss)
    say("nproc step done")
    report["failed"] = [name for name in ("agreement", "train", "generation", "nproc") if not report[name]["ok"]]
    report["wall_s"] = time.perf_counter() - started
    out.parent.mkdir(parents=True, exist_ok=True)
    text = json.dumps(report, indent=2)
    out.write_text(text + "\n")
    print(text)
    return 1 if report["failed"] else 0


if __name__ == "__main__":
    sys.exit(main())
