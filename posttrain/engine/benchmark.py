"""`posttrain engine bench`: the inference backends side by side on the same requests.

Two workloads, each run on a fresh engine per backend (an empty prefix cache):

* group: P chat-templated prompts x n samples x max_tokens new tokens in one generate() call
  (GRPO group sampling: the n samples of a prompt share it as a prefix);
* multiturn: C agent conversations x T turns; turn t's prompt is turn t-1's prompt + its
  completion + a new user message, so the turns extend a shared history; one generate() call
  a turn holds every conversation's turn, max_tokens // 2 new tokens each.

Sampling is at temperature 1.0 with fixed seeds; EOS stops a sample as it would in training,
so backends may emit different token counts: the figure compared is output tokens / wall
seconds, which stays fair. Also measured in the same process: an fp32 matmul peak (and a bf16
one only where bf16 is native, see posttrain.cpu), and the builtin engine's achieved model
FLOP/s on the group workload as a fraction of the fp32 peak.
"""

from __future__ import annotations

import copy
import gc
import os
import time
from collections.abc import Callable

import torch
from rich.console import Console

from posttrain import cpu
from posttrain.config import EngineConfig
from posttrain.engine.factory import engine_for_model, engine_for_spec
from posttrain.engine.interface import Completion, GenerationRequest, SamplingParams
from posttrain.errors import PosttrainError
from posttrain.models.chat_tokens import ChatTokens
from posttrain.models.loading import load_model, load_tokenizer
from posttrain.models.spec import ModelSpec, ModelSpecError
from posttrain.models.token_ids import chat_prompt_ids

BACKENDS = ("hf", "builtin", "vllm")
# every core, unless OMP_NUM_THREADS says otherwise (a test run with parallel workers sets 1)
THREADS = int(os.environ.get("OMP_NUM_THREADS") or os.cpu_count() or 1)

_QUESTIONS = [
    "How many prime numbers are there between 10 and 30? Explain your reasoning step by step.",
    "A train leaves at 3:40 pm and the trip takes 2 hours and 35 minutes. When does it arrive?",
    "Write a short Python function that returns the second largest number in a list of integers.",
    "Why is the sky blue during the day but red and orange at sunset? Keep the answer brief.",
    "If a rectangle has a perimeter of 36 cm and its length is twice its width, what is its area?",
    "Summarise the main causes of the French Revolution in three or four sentences.",
    "What is the difference between a list and a tuple in Python, and when would you use each?",
    "Sarah has 3 times as many apples as Tom. Together they have 48 apples. How many does Tom have?",
    "Explain what a hash table is and why looking up a key is usually fast, for a beginner.",
    "Translate the sentence 'The library opens at nine and closes at six' into French and Spanish.",
    "List four ways to reduce the energy use of a small office building, with one line for each.",
    "What is 17 multiplied by 23? Show the multiplication as a sum of easier partial products.",
    "Describe how photosynthesis works in plants, mentioning the inputs and the outputs.",
    "A shop discounts a jacket by 20% and then by another 10%. What is the total discount?",
    "Write a haiku about autumn rain in a quiet city, then explain the image in one sentence.",
    "What are the trade-offs between using SQLite and PostgreSQL for a small web application?",
]

_AGENT_SYSTEM = (
    "You are a coding agent working in a Linux shell inside a sandbox. Each turn, think briefly, "
    "then reply with exactly one shell command in a ```bash block. You see the command's output "
    "in the next message. When the task is done, reply with DONE and a one-line summary."
)
_AGENT_TASKS = [
    "Find the five largest files under /app and print their sizes in megabytes.",
    "The test suite in /app/tests fails on test_parse_date. Find out why and fix the bug.",
    "Count the lines of Python code in /app/src, excluding blank lines and comments.",
    "Create a virtual environment in /app/.venv and install the packages in requirements.txt.",
    "The service in /app/server.py does not start. Read its log in /app/logs and fix it.",
    "Rename every .jpeg file under /app/images to .jpg without overwriting existing files.",
    "Write a script /app/backup.sh that archives /app/data into a dated tar.gz file.",
    "Find which commit in the git repository at /app introduced the string 'TODO: remove'.",
]
_OBSERVATIONS = [
    "The command ran. Output:\n{n} lines printed, exit code 0. Continue with the next step.",
    "The command failed with exit code 1:\nbash: line 1: unexpected token near `{n}`. Try again.",
    "Output:\ntotal {n}\ndrwxr-xr-x 2 root root 4096 . \n-rw-r--r-- 1 root root {n}0 notes.txt\nWhat next?",
    "Output (truncated):\nTraceback (most recent call last):\n  File \"app.py\", line {n}\nKeyError: 'path'",
]


# ---- workloads ---------------------------------------------------------------------------------


def group_prompts(tokenizer, count: int) -> list[list[int]]:
    """`count` distinct chat-templated questions of about 40-80 tokens."""
    prompts = []
    for i in range(count):
        question = _QUESTIONS[i % len(_QUESTIONS)]
        if i >= len(_QUESTIONS):
            question = f"{question} (Variant {i // len(_QUESTIONS)}.)"
        messages = [{"role": "user", "content": question}]
        prompts.append(chat_prompt_ids(tokenizer, messages))
    return prompts


class _Conversation:
    """One agent conversation kept as token ids, so every turn's prompt extends the previous one
    token for token (the prefix a cache can serve)."""

    def __init__(self, tokenizer, index: int) -> None:
        self.tokenizer = tokenizer
        self.chat = ChatTokens(tokenizer)
        self.index = index
        messages = [
            {"role": "system", "content": _AGENT_SYSTEM},
            {"role": "user", "content": _AGENT_TASKS[index % len(_AGENT_TASKS)]},
        ]
        self.prompt = chat_prompt_ids(tokenizer, messages)

    def extend(self, completion: list[int], turn: int) -> None:
        """prompt <- prompt + completion + the next user message (and the assistant header)."""
        message = _OBSERVATIONS[(self.index + turn) % len(_OBSERVATIONS)].format(n=7 * self.index + 3 * turn + 1)
        chat = self.chat
        self.prompt = (
            self.prompt + list(completion) + chat.close_turn(completion) + chat.message("user", message) + chat.header
        )


# ---- backends ----------------------------------------------------------------------------------


class _Backend:
    """A backend's model (loaded once) and a factory for fresh engines over it."""

    def __init__(self, name: str, make_engine: Callable[[], object]) -> None:
        self.name = name
        self.make_engine = make_engine


def _local_backend(name: str, base: torch.nn.Module, tokenizer) -> _Backend:
    """One copy of the weights per backend (an engine may touch its model), shared by that
    backend's fresh engines."""
    model = copy.deepcopy(base)
    settings = EngineConfig(backend=name)
    return _Backend(name, lambda: engine_for_model(settings, model, tokenizer))


def _vllm_backend(model_spec: str, tokenizer) -> _Backend:
    """The vLLM backend when it can run here; raises _Unavailable with the reason otherwise."""
    try:
        import vllm  # noqa: F401
    except Exception as exc:  # ImportError, or a broken install raising something else
        raise _Unavailable(f"import vllm failed: {type(exc).__name__}: {exc}".splitlines()[0]) from exc
    try:
        import posttrain.engine.vllm_engine  # noqa: F401
    except Exception as exc:
        raise _Unavailable(f"posttrain.engine.vllm_engine: {type(exc).__name__}: {exc}".splitlines()[0]) from exc
    try:
        spec = ModelSpec("vllm", model_spec)
    except ModelSpecError as exc:
        raise _Unavailable(str(exc)) from exc
    return _Backend("vllm", lambda: engine_for_spec(spec, tokenizer=tokenizer).engine)


class _Unavailable(Exception):
    pass


# ---- measurement -------------------------------------------------------------------------------


def _output_tokens(completions: list[Completion]) -> int:
    return sum(len(c.token_ids) for c in completions)


def _stats_delta(engine, before: dict) -> dict:
    stats = getattr(engine, "stats", None)
    if stats is None:
        return {}
    now = vars(stats)
    return {key: now[key] - before.get(key, 0) for key in now}


def _run_group(engine, prompts: list[list[int]], n: int, max_tokens: int) -> tuple[dict, dict]:
    requests = [
        GenerationRequest(
            f"group-{i}", prompt, SamplingParams(n=n, temperature=1.0, max_tokens=max_tokens, seed=1000 + i)
        )
        for i, prompt in enumerate(prompts)
    ]
    before = dict(vars(engine.stats)) if hasattr(engine, "stats") else {}
    started = time.perf_counter()
    completions = engine.generate(requests)
    wall = time.perf_counter() - started
    tokens = _output_tokens(completions)
    return {
        "tok_s": tokens / wall,
        "wall_s": wall,
        "output_tokens": tokens,
        "samples": len(completions),
        "prompt_tokens": sum(len(p) for p in prompts) * n,
    }, _stats_delta(engine, before)


def _run_multiturn(engine, tokenizer, conversations: int, turns: int, max_tokens: int) -> tuple[dict, dict]:
    convs = [_Conversation(tokenizer, i) for i in range(conversations)]
    before = dict(vars(engine.stats)) if hasattr(engine, "stats") else {}
    tokens = prompt_tokens = 0
    wall = 0.0
    completions = []
    for turn in range(turns):
        if turn:
            for conv, completion in zip(convs, completions):
                conv.extend(completion.token_ids, turn)
        requests = [
            GenerationRequest(
                f"conv-{c.index}-turn-{turn}",
                c.prompt,
                SamplingParams(n=1, temperature=1.0, max_tokens=max_tokens, seed=100 * turn + c.index),
            )
            for c in convs
        ]
        started = time.perf_counter()
        completions = engine.generate(requests)
        wall += time.perf_counter() - started  # building the next prompts is not the engine's time
        tokens += _output_tokens(completions)
        prompt_tokens += sum(len(c.prompt) for c in convs)
    return {
        "tok_s": tokens / wall,
        "wall_s": wall,
        "output_tokens": tokens,
        "prompt_tokens": prompt_tokens,
        "final_prompt_tokens_mean": sum(len(c.prompt) for c in convs) / len(convs),
    }, _stats_delta(engine, before)


def _warm_up(engine, prompt: list[int]) -> None:
    """First calls pay one-off costs (allocator growth, kernel selection, lazy imports); pay
    them on a throwaway engine so the measured engines start with an empty prefix cache."""
    engine.generate([GenerationRequest("warm-up", prompt, SamplingParams(n=2, temperature=1.0, max_tokens=4, seed=0))])


def matmul_peak_flops(
    size: int = 2048, repeats: int = 5, dtype: torch.dtype = torch.float32, budget_s: float = 5.0
) -> float:
    """The CPU's practical peak FLOP/s: the best of `repeats` size x size products, within
    `budget_s` (cpu.matmul_gflops)."""
    return cpu.matmul_gflops(size, dtype, repeats, budget_s) * 1e9


def bf16_peak_flops() -> tuple[float | None, str | None]:
    """The bf16 matmul peak where bf16 is native (cpu.bf16_matmul_probe), else None and why:
    an emulated bf16 2048^3 product takes about a minute on an AVX2-only CPU."""
    probe = cpu.bf16_matmul_probe()
    if not probe["fast"]:
        return None, (
            f"bf16 is emulated on this CPU ({probe['gflops_bf16']} GFLOP/s against "
            f"{probe['gflops_fp32']} in fp32 on the probe); not measured"
        )
    return matmul_peak_flops(dtype=torch.bfloat16), None


def flops_per_token(model: torch.nn.Module) -> float:
    """2 x (non-embedding parameters + lm_head parameters): the matmul FLOPs of one token's
    forward pass, attention scores and the embedding lookup left out."""
    embedding = model.get_input_embeddings().weight
    head = model.get_output_embeddings()
    head_weight = head.weight if head is not None else embedding
    unique = {id(p): p for p in model.parameters()}
    body = sum(p.numel() for key, p in unique.items() if key not in (id(embedding), id(head_weight)))
    return 2.0 * (body + head_weight.numel())


def _ratio(a: dict | None, b: dict | None) -> float | None:
    if not a or not b or not b.get("tok_s"):
        return None
    return a["tok_s"] / b["tok_s"]


# ---- the benchmark -----------------------------------------------------------------------------


def _measure(
    backend: _Backend,
    tokenizer,
    group: list[list[int]],
    n: int,
    max_tokens: int,
    conversations: int,
    turns: int,
    turn_tokens: int,
    console: Console,
) -> tuple[dict, dict]:
    """Both workloads on one backend, each on a fresh engine, after a warm-up on a throwaway one."""
    name = backend.name
    console.print(f"{name}: warm-up ...", highlight=False)
    _warm_up(backend.make_engine(), group[0])
    gc.collect()

    console.print(f"{name}: group ({len(group)} prompts x n={n} x {max_tokens} tokens) ...", highlight=False)
    load = os.getloadavg()[0]
    group_row, delta = _run_group(backend.make_engine(), group, n, max_tokens)
    group_row["load_average"] = [load, os.getloadavg()[0]]
    _add_cache_stats(group_row, delta)
    console.print(
        f"  {name} group: {group_row['tok_s']:.1f} tok/s, {group_row['output_tokens']} tokens in "
        f"{group_row['wall_s']:.1f} s",
        highlight=False,
    )
    gc.collect()

    console.print(
        f"{name}: multiturn ({conversations} conversations x {turns} turns x {turn_tokens} tokens) ...", highlight=False
    )
    load = os.getloadavg()[0]
    multiturn_row, delta = _run_multiturn(backend.make_engine(), tokenizer, conversations, turns, turn_tokens)
    multiturn_row["load_average"] = [load, os.getloadavg()[0]]  # 1-minute load before, after: > threads = shared CPU
    _add_cache_stats(multiturn_row, delta)
    console.print(
        f"  {name} multiturn: {multiturn_row['tok_s']:.1f} tok/s, {multiturn_row['output_tokens']} tokens "
        f"in {multiturn_row['wall_s']:.1f} s",
        highlight=False,
    )
    return group_row, multiturn_row


def _add_cache_stats(row: dict, delta: dict) -> None:
    """Engines that keep stats (builtin): prefix_hit_rate = cached / all prompt tokens, this workload's."""
    if delta:
        row["prefix_hit_rate"] = (
            delta["cached_prompt_tokens"] / delta["prompt_tokens"] if delta["prompt_tokens"] else 0.0
        )
        row["engine_stats"] = delta


def parse_backends(text: str) -> list[str]:
    names = [name.strip() for name in text.split(",") if name.strip()]
    unknown = [name for name in names if name not in BACKENDS]
    if unknown or not names:
        raise PosttrainError(f"--backends {text!r}: choose from {', '.join(BACKENDS)} (comma-separated)")
    return list(dict.fromkeys(names))


def run_benchmark(
    model_spec: str = "smollm2-135m",
    prompts: int = 16,
    n: int = 8,
    max_tokens: int = 128,
    turns: int = 4,
    conversations: int = 8,
    backends: list[str] | None = None,
    console: Console | None = None,
) -> dict:
    from posttrain.engine.builtin.allocator import keep_freed_memory

    console = console or Console(stderr=True)
    backends = backends or ["hf", "builtin", "vllm"]
    for name, value in (
        ("--prompts", prompts),
        ("--n", n),
        ("--max-tokens", max_tokens),
        ("--turns", turns),
        ("--conversations", conversations),
    ):
        if value < 1:
            raise PosttrainError(f"{name} must be >= 1, got {value}")
    torch.set_num_threads(THREADS)
    keep_freed_memory()  # the builtin engine sets this malloc tuning; every backend gets it, for a fair race
    load_start = os.getloadavg()[0]
    peak_start = matmul_peak_flops()
    turn_tokens = max(1, max_tokens // 2)

    console.print(f"loading {model_spec} ...", highlight=False)
    tokenizer = load_tokenizer(model_spec)
    base = load_model(model_spec).eval()
    group = group_prompts(tokenizer, prompts)
    lengths = [len(p) for p in group]

    unavailable: dict[str, str] = {}
    makers: dict[str, Callable[[], _Backend]] = {
        "hf": lambda: _local_backend("hf", base, tokenizer),
        "builtin": lambda: _local_backend("builtin", base, tokenizer),
        "vllm": lambda: _vllm_backend(model_spec, tokenizer),
    }
    results: dict[str, dict[str, dict | None]] = {"group": {}, "multiturn": {}}
    builtin_group_stats: dict = {}
    for name in BACKENDS:
        results["group"][name] = results["multiturn"][name] = None
        if name not in backends:
            unavailable[name] = "not requested (--backends)"
            continue
        try:
            backend = makers[name]()
            group_row, multiturn_row = _measure(
                backend, tokenizer, group, n, max_tokens, conversations, turns, turn_tokens, console
            )
        except _Unavailable as exc:
            unavailable[name] = str(exc)
        except Exception as exc:
            if name != "vllm":
                raise  # hf and builtin are ours: a failure is a bug to see, not a row to skip
            unavailable[name] = f"{type(exc).__name__}: {exc}".splitlines()[0]
        else:
            results["group"][name], results["multiturn"][name] = group_row, multiturn_row
            if name == "builtin":
                builtin_group_stats = {**group_row["engine_stats"], "wall_s": group_row["wall_s"]}
        if name in unavailable:
            console.print(f"[yellow]{name}: unavailable[/] ({unavailable[name]})", highlight=False)
        backend = None
        gc.collect()

    for workload in results.values():
        workload["ratios"] = {
            "builtin/hf": _ratio(workload["builtin"], workload["hf"]),
            "builtin/vllm": _ratio(workload["builtin"], workload["vllm"]),
        }

    console.print("matmul peak (fp32 2048x2048) ...", highlight=False)
    peak = max(peak_start, matmul_peak_flops())  # best of before and after: the machine may be shared
    peak_bf16, bf16_skipped = bf16_peak_flops()
    per_token = flops_per_token(base)
    achieved = fraction = None
    if builtin_group_stats:
        achieved = per_token * builtin_group_stats["computed_tokens"] / builtin_group_stats["wall_s"]
        fraction = achieved / peak

    return {
        "model": model_spec,
        "threads": torch.get_num_threads(),
        "torch": torch.__version__,
        "load_average": {"start": load_start, "end": os.getloadavg()[0]},  # other work on the machine skews it
        "settings": {
            "prompts": prompts,
            "n": n,
            "max_tokens": max_tokens,
            "turns": turns,
            "conversations": conversations,
            "multiturn_max_tokens": turn_tokens,
            "temperature": 1.0,
            "group_prompt_tokens": {"min": min(lengths), "max": max(lengths), "mean": sum(lengths) / len(lengths)},
        },
        "workloads": results,
        "unavailable": unavailable,
        "matmul_peak_flops": peak,
        "matmul_peak_flops_bf16": peak_bf16,
        **({"matmul_peak_flops_bf16_skipped": bf16_skipped} if bf16_skipped else {}),
        "model_flops_per_token": per_token,
        "builtin_achieved_flops": achieved,
        "builtin_flops_fraction": fraction,
    }
