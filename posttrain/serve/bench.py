"""`posttrain serve bench`: the standard and the fast variant over HTTP, side by side.

For each variant, workload and concurrency a fresh server is started in its own process (an
empty prefix cache and an empty output history: no cell profits from an earlier cell's
identical requests), and `concurrency` client threads send the workload's requests, streamed,
greedy, each as soon as the client's previous one finished:

    agent   turns of real multi-turn terminal episodes (benchmarks/data/serve_agent_turns.jsonl:
            system prompt with the tools, instruction, earlier calls and observations), sent
            as SmolLM2 token ids to /v1/completions
    chat    short questions to /v1/chat/completions

Per cell: output tokens/s (completion tokens / wall seconds of the cell), time to first token
p50/p95, inter-token latency p50/p95 (each request's (last token - first token) / (tokens - 1)),
and the server's speculative acceptance rate; per workload, whether the variants' greedy
outputs were identical, and the fast/standard ratios.

With repeats > 1 each (workload, concurrency) pair runs that many times, the two variants back
to back in alternating order, and the ratio reported is the median of the per-repeat ratios:
on a shared machine the load drifts over minutes, and a ratio of two neighbouring cells is
what stays meaningful.

Where `.venv-vllm` exists (or with vllm="on"), vLLM's own OpenAI server runs the same cells,
plain and with its n-gram speculation (vllm_openai_server.py), and the report adds
standard/vllm and fast/vllm-ngram ratios: medians of the per-repeat ratios. Both vLLM servers
start once, before the first cell (each takes minutes to compile), wait idle, and empty their
prefix cache before each of their cells; every posttrain cell runs right next to the vLLM cell
it is compared with (cell_order), so that each ratio compares cells a minute apart: the host's
speed drifts by 20% within minutes.
"""

from __future__ import annotations

import contextlib
import http.client
import json
import os
import queue
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from posttrain.dispatch.local_cluster import free_port
from posttrain.engine.builtin.quantization import CHOICES as QUANTIZE_CHOICES
from posttrain.errors import PosttrainError
from posttrain.serve.vllm_openai_server import ARMS as VLLM_ARMS
from posttrain.serve.vllm_openai_server import VLLMOpenAIServer, pin_to, vllm_python
from posttrain.serve.vllm_stepper import NGRAM_SPECULATION

AGENT_TURNS = Path(__file__).resolve().parents[2] / "benchmarks" / "data" / "serve_agent_turns.jsonl"
CHAT_QUESTIONS = [
    "What is the capital of France?",
    "Name three primary colors.",
    "What is 17 + 25?",
    "Give me a synonym for happy.",
    "What does CPU stand for?",
    "How many legs does a spider have?",
    "Why is the sky blue?",
    "Suggest a name for a cat.",
    "What is the boiling point of water in Celsius?",
    "Translate 'good morning' into French.",
    "What is 9 times 8?",
    "Is a tomato a fruit or a vegetable?",
    "List two uses of copper.",
    "Define the word 'entropy'.",
    "Tell me a joke about programmers.",
    "What is the opposite of 'ancient'?",
    "What is the largest planet in the solar system?",
    "Name a mammal that can fly.",
    "What is 144 divided by 12?",
    "Give me an antonym for brave.",
    "What does RAM stand for?",
    "How many days are in a leap year?",
    "Why do leaves change colour in autumn?",
    "Suggest a name for a goldfish.",
    "What is the freezing point of water in Fahrenheit?",
    "Translate 'thank you' into Spanish.",
    "What is 15 squared?",
    "Is a whale a fish or a mammal?",
    "Who wrote Romeo and Juliet?",
    "What gas do plants absorb from the air?",
    "Name three kinds of cloud.",
    "What is the square root of 81?",
    "How many continents are there?",
    "What is the chemical symbol for gold?",
    "Give me a rhyme for 'cat'.",
    "What does HTML stand for?",
    "Name a famous painting by Leonardo da Vinci.",
    "What is the longest river in Africa?",
    "How many sides does a hexagon have?",
    "What is the main ingredient of guacamole?",
    "Describe the colour of the ocean in one sentence.",
    "What is 1000 minus 387?",
    "Name two musical instruments with strings.",
    "What is the smallest prime number?",
    "Give me a synonym for fast.",
    "Why do we have seasons?",
    "What language is spoken in Brazil?",
    "Name a bird that cannot fly.",
    "What is the capital of Japan?",
    "How many minutes are in two hours?",
    "What does a thermometer measure?",
    "Suggest a title for a short story about rain.",
    "What is the opposite of 'generous'?",
    "Name three fruits that are yellow.",
    "What is 7 times 13?",
    "What is the hardest natural substance?",
    "Explain what a verb is.",
    "What planet is known as the red planet?",
    "Name a sport played with a racket.",
    "What is the capital of Canada?",
    "How many hours are in a week?",
    "Give me a word that starts with 'q'.",
    "What do bees make?",
    "Name the three states of matter.",
]


WORKLOADS = ("agent", "chat")
VLLM_CHOICES = ("auto", "on", "off")


@dataclass
class Settings:
    model: str = "smollm2-135m"
    concurrencies: tuple[int, ...] = (1, 4, 16)
    agent_max_tokens: int = 48
    chat_max_tokens: int = 32
    turns_file: Path = AGENT_TURNS
    workloads: tuple[str, ...] = ("agent", "chat")
    repeats: int = 1
    quantize: str | None = None  # the fast variant's servers load int8 weights (lossy)
    compile_step: bool = False  # every posttrain server compiles its decoder layers (serve --compile)
    requests_per_client: int = 2
    server_cpus: tuple[int, ...] = ()  # pin every server (posttrain's and vLLM's) to these CPUs
    vllm: str = "auto"  # vLLM's own server as a baseline: auto (where .venv-vllm exists), on, off

    def __post_init__(self) -> None:
        unknown = set(self.workloads) - set(WORKLOADS)
        if unknown or not self.workloads:
            raise PosttrainError(f"workloads: expected some of {', '.join(WORKLOADS)}, got {', '.join(self.workloads)}")
        if self.quantize and self.quantize not in QUANTIZE_CHOICES:
            raise PosttrainError(f"--quantize must be one of {', '.join(QUANTIZE_CHOICES)}, not {self.quantize!r}")
        if self.repeats < 1:
            raise PosttrainError(f"repeats: expected >= 1, got {self.repeats}")
        if self.requests_per_client < 1:
            raise PosttrainError(f"--requests-per-client: expected >= 1, got {self.requests_per_client}")
        allowed = os.sched_getaffinity(0)
        if self.server_cpus and not set(self.server_cpus) <= allowed:
            missing = sorted(set(self.server_cpus) - allowed)
            raise PosttrainError(f"--server-cpus: {missing} not among this machine's CPUs {sorted(allowed)}")
        if self.vllm not in VLLM_CHOICES:
            raise PosttrainError(f"--vllm must be one of {', '.join(VLLM_CHOICES)}, not {self.vllm!r}")


@dataclass
class Timing:
    text: str
    tokens: int
    ttft: float
    itl: float | None


def requests_for(workload: str, settings: Settings, concurrency: int) -> list[tuple[str, dict]]:
    """(path, body) of a cell's requests: at least 8, and requests_per_client per client, up to
    the workload's distinct requests (a repeated request would let the fast variant copy its
    earlier answer from the output history)."""
    count = max(8, settings.requests_per_client * concurrency)
    if workload == "agent":
        if not settings.turns_file.is_file():
            raise PosttrainError(
                f"{settings.turns_file}: no agent turns; write them with benchmarks/serve_agent_turns.py"
            )
        turns = [json.loads(line) for line in settings.turns_file.read_text().splitlines() if line.strip()]
        return [
            (
                "/v1/completions",
                {"prompt": turns[i % len(turns)]["prompt_ids"], "max_tokens": settings.agent_max_tokens},
            )
            for i in range(min(count, len(turns)))
        ]
    return [
        (
            "/v1/chat/completions",
            {
                "messages": [{"role": "user", "content": CHAT_QUESTIONS[i % len(CHAT_QUESTIONS)]}],
                "max_tokens": settings.chat_max_tokens,
            },
        )
        for i in range(min(count, len(CHAT_QUESTIONS)))
    ]


class ServerProcess:
    """`posttrain serve` in a child process, on a free port, until stop()."""

    def __init__(
        self, model: str, variant: str, max_concurrency: int, extra: tuple[str, ...] = (), cpus: tuple[int, ...] = ()
    ) -> None:
        self.port = free_port()
        command = [sys.executable, "-m", "posttrain.cli", "serve", model, "--variant", variant]
        command += ["--port", str(self.port), "--max-concurrency", str(max_concurrency), *extra]
        self.process = subprocess.Popen(
            command,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            env=os.environ.copy(),
            preexec_fn=pin_to(cpus),
        )
        deadline = time.monotonic() + 180
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise PosttrainError(f"the {variant} server exited: {self.process.stderr.read().decode()[-500:]}")
            try:
                if self.get("/health").get("status") == "ok":
                    return
            except OSError:
                pass
            time.sleep(0.5)
        self.stop()
        raise PosttrainError(f"the {variant} server did not answer /health within 180 s")

    def get(self, path: str) -> dict:
        connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=10)
        connection.request("GET", path)
        return json.loads(connection.getresponse().read())

    def metric(self, name: str) -> float | None:
        connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=10)
        connection.request("GET", "/metrics")
        for line in connection.getresponse().read().decode().splitlines():
            if line.startswith(f"posttrain_serve_{name} "):
                return float(line.split()[-1])
        return None

    def stop(self) -> None:
        self.process.terminate()
        try:
            self.process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


def stream_request(port: int, path: str, body: dict) -> Timing:
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=600)
    payload = {**body, "stream": True, "temperature": 0, "stream_options": {"include_usage": True}}
    start = time.perf_counter()
    connection.request("POST", path, json.dumps(payload), {"Content-Type": "application/json"})
    response = connection.getresponse()
    if response.status != 200:
        raise PosttrainError(f"{path} answered {response.status}: {response.read()[:300]!r}")
    first = last = None
    text, tokens = [], 0
    for raw in response:
        line = raw.decode().strip()
        if not line.startswith("data: ") or line == "data: [DONE]":
            continue
        chunk = json.loads(line[6:])
        if "error" in chunk:
            raise PosttrainError(f"{path}: {chunk['error']['message']}")
        if chunk.get("usage"):
            tokens = chunk["usage"]["completion_tokens"]
        for choice in chunk.get("choices", []):
            piece = choice.get("text") if "text" in choice else (choice.get("delta") or {}).get("content")
            if piece:
                now = time.perf_counter()
                first = first if first is not None else now
                last = now
                text.append(piece)
    connection.close()
    ttft = (first if first is not None else time.perf_counter()) - start
    itl = (last - first) / (tokens - 1) if first is not None and tokens > 1 else None
    return Timing("".join(text), tokens, ttft, itl)


def run_cell(port: int, requests: list[tuple[str, dict]], concurrency: int, model: str) -> tuple[list[Timing], float]:
    work: queue.Queue = queue.Queue()
    for index, request in enumerate(requests):
        work.put((index, request))
    results: list[Timing | None] = [None] * len(requests)
    errors: list[BaseException] = []

    def client() -> None:
        while True:
            try:
                index, (path, body) = work.get_nowait()
            except queue.Empty:
                return
            try:
                results[index] = stream_request(port, path, {**body, "model": model})
            except BaseException as exc:  # reported after the cell
                errors.append(exc)

    start = time.perf_counter()
    threads = [threading.Thread(target=client) for _ in range(concurrency)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    wall = time.perf_counter() - start
    if errors:
        raise PosttrainError(f"a benchmark request failed: {errors[0]}")
    return results, wall  # type: ignore[return-value]


def _percentile(values: list[float], q: float) -> float | None:
    if not values:
        return None
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def summarize(timings: list[Timing], wall: float, acceptance: float | None) -> dict:
    tokens = sum(t.tokens for t in timings)
    itls = [t.itl for t in timings if t.itl is not None]
    return {
        "requests": len(timings),
        "output_tokens": tokens,
        "wall_s": round(wall, 3),
        "output_tok_s": round(tokens / wall, 2),
        "ttft_p50_s": _round(_percentile([t.ttft for t in timings], 0.5)),
        "ttft_p95_s": _round(_percentile([t.ttft for t in timings], 0.95)),
        "itl_p50_s": _round(_percentile(itls, 0.5)),
        "itl_p95_s": _round(_percentile(itls, 0.95)),
        "acceptance_rate": _round(acceptance),
    }


def _round(value: float | None) -> float | None:
    return round(value, 4) if value is not None else None


def warm_up(port: int, requests: list[tuple[str, dict]], concurrency: int, model: str) -> None:
    """Two of a cell's requests before it is measured: a server's first passes are slower."""
    run_cell(port, requests[:2], min(2, concurrency), model)


def cell_summary(timings: list[Timing], wall: float, acceptance: float | None) -> dict:
    # the machine is shared: a load above the server's threads means the cell was disturbed
    return summarize(timings, wall, acceptance) | {"load_average_1m": round(os.getloadavg()[0], 2)}


def _run_one(settings: Settings, workload: str, variant: str, concurrency: int) -> tuple[dict, list[str]]:
    """One cell on a fresh server: its summary and its replies."""
    requests = requests_for(workload, settings, concurrency)
    extra = ("--quantize", settings.quantize) if settings.quantize and variant == "fast" else ()
    extra += ("--compile",) if settings.compile_step else ()
    server = ServerProcess(settings.model, variant, max(concurrency, 1), extra, settings.server_cpus)
    try:
        warm_up(server.port, requests, concurrency, settings.model)
        timings, wall = run_cell(server.port, requests, concurrency, settings.model)
        acceptance = server.metric("speculative_acceptance_rate") if variant == "fast" else None
    finally:
        server.stop()
    return cell_summary(timings, wall, acceptance), [t.text for t in timings]


# each posttrain variant and the vLLM arm it is compared with
VLLM_COUNTERPARTS = (("standard", "vllm"), ("fast", "vllm-ngram"))


def counterpart_ratio_name(ours: str, theirs: str) -> str:
    """The report's key for ours/theirs: standard_over_vllm, fast_over_vllm_ngram."""
    return f"{ours.replace('-', '_')}_over_{theirs.replace('-', '_')}"


def cell_order(repeat: int, with_vllm: bool) -> list[str]:
    """The arms of one (workload, concurrency) cell in a repeat: each posttrain variant next to
    its vLLM counterpart, the whole order reversed every other repeat."""
    arms = [arm for pair in VLLM_COUNTERPARTS for arm in (pair if with_vllm else pair[:1])]
    return arms if repeat % 2 == 0 else arms[::-1]


def run_benchmark(settings: Settings, progress=None) -> dict:
    """progress(label) is called before each cell and each vLLM server's start. Ratios are
    medians of the per-repeat ratios of neighbouring cells (cell_order)."""
    variants = ("standard", "fast")
    use_vllm = _vllm_enabled(settings)  # before any cell: --vllm on without .venv-vllm fails at once
    report: dict = {
        "model": settings.model,
        "workloads": {},
        "settings": {
            "concurrencies": list(settings.concurrencies),
            "agent_max_tokens": settings.agent_max_tokens,
            "chat_max_tokens": settings.chat_max_tokens,
            "repeats": settings.repeats,
            "fast_quantize": settings.quantize,
            "compiled_step": settings.compile_step,
            "greedy": True,
            "omp_num_threads": os.environ.get("OMP_NUM_THREADS"),
            "requests_per_client": settings.requests_per_client,
            "server_cpus": list(settings.server_cpus) or None,
        },
    }
    runs: dict[tuple[str, str, int], list[dict]] = {}  # (workload, variant or vLLM arm, concurrency): by repeat
    texts: dict[tuple[str, str, int], list[str]] = {}  # the first run's replies
    repeatable = True  # greedy: every run of a cell replies the same
    vllm_info: dict = {}
    with contextlib.ExitStack() as stack:
        vllm_servers = start_vllm_servers(settings, stack, progress) if use_vllm else {}
        if vllm_servers:
            first = next(iter(vllm_servers.values()))
            vllm_info = {"version": first.version(), "omp_threads_bind": first.omp_threads_bind}
        for repeat in range(settings.repeats):
            for workload in settings.workloads:
                for concurrency in settings.concurrencies:
                    for arm in cell_order(repeat, use_vllm):
                        if progress:
                            progress(f"{workload} · {arm} · concurrency {concurrency} · run {repeat + 1}")
                        if arm in vllm_servers:
                            cell, replies = _run_vllm_cell(vllm_servers[arm], settings, workload, concurrency)
                        else:
                            cell, replies = _run_one(settings, workload, arm, concurrency)
                        runs.setdefault((workload, arm, concurrency), []).append(cell)
                        first_replies = texts.setdefault((workload, arm, concurrency), replies)
                        repeatable = repeatable and (arm in vllm_servers or replies == first_replies)

    for workload in settings.workloads:
        cells: dict = {variant: {} for variant in variants}
        ratios: dict = {}
        identical = repeatable
        for concurrency in settings.concurrencies:
            identical = (
                identical and texts[(workload, "fast", concurrency)] == texts[(workload, "standard", concurrency)]
            )
            per_repeat = _per_repeat(runs, workload, "fast", "standard", concurrency)
            ratios[str(concurrency)] = round(statistics.median(per_repeat), 3)
            for variant in variants:
                cell_runs = runs[(workload, variant, concurrency)]
                cells[variant][str(concurrency)] = {**cell_runs[0]}  # the first run, and all of them
                if settings.repeats > 1:
                    cells[variant][str(concurrency)]["runs"] = cell_runs
            if settings.repeats > 1:
                ratios[f"{concurrency}_by_repeat"] = [round(r, 3) for r in per_repeat]
        report["workloads"][workload] = {**cells, "fast_over_standard_tok_s": ratios, "greedy_identical": identical}
    low, high = str(min(settings.concurrencies)), str(max(settings.concurrencies))
    # int8 weights are lossy: identical greedy output is then not a goal, only a record
    goals = (
        {}
        if settings.quantize
        else {"greedy_identical": all(w["greedy_identical"] for w in report["workloads"].values())}
    )
    if "agent" in report["workloads"]:
        agent = report["workloads"]["agent"]["fast_over_standard_tok_s"]
        goals["agent_fast_2x_at_lowest_concurrency"] = agent[low] >= 2.0
        goals["agent_fast_not_slower_at_highest_concurrency"] = agent[high] >= 1.0
    if "chat" in report["workloads"]:
        chat = report["workloads"]["chat"]["fast_over_standard_tok_s"]
        goals["chat_fast_never_below_0.95x"] = min(chat[str(c)] for c in settings.concurrencies) >= 0.95
    if use_vllm:
        report["vllm"] = _vllm_report(settings, runs, texts, vllm_info)
        if "agent" in report["vllm"]["ratios"]:
            agent = report["vllm"]["ratios"]["agent"]
            goals["agent_standard_at_least_0.9x_vllm"] = min(agent["standard_over_vllm"].values()) >= 0.9
            goals["agent_fast_ahead_of_vllm_ngram"] = min(agent["fast_over_vllm_ngram"].values()) > 1.0
    else:
        report["vllm"] = f"not run: {'--vllm off' if settings.vllm == 'off' else '.venv-vllm/bin/vllm is absent'}"
    report["goals"] = goals
    return report


def _per_repeat(runs: dict, workload: str, ours: str, theirs: str, concurrency: int) -> list[float]:
    """ours / theirs output tok/s, repeat by repeat."""
    pairs = zip(runs[(workload, ours, concurrency)], runs[(workload, theirs, concurrency)], strict=True)
    return [a["output_tok_s"] / b["output_tok_s"] for a, b in pairs]


def _vllm_enabled(settings: Settings) -> bool:
    if settings.vllm == "off":
        return False
    found = vllm_python() is not None
    if settings.vllm == "on" and not found:
        raise PosttrainError("--vllm on: .venv-vllm/bin/vllm is missing; make bench-engines builds that environment")
    return found


def start_vllm_servers(settings: Settings, stack: contextlib.ExitStack, progress=None) -> dict:
    """vLLM's own OpenAI server for each arm, plain and with n-gram speculation, started one
    after the other and stopped when `stack` closes (their logs in a temporary folder)."""
    from posttrain.models.loading import resolve_model_dir

    model_dir = resolve_model_dir(settings.model)
    logs = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="serve-bench-vllm-")))
    servers = {}
    for arm in VLLM_ARMS:
        if progress:
            progress(f"starting vllm serve ({arm})")
        server = VLLMOpenAIServer(
            arm, model_dir, settings.model, max(settings.concurrencies), logs / f"{arm}.log", settings.server_cpus
        )
        stack.callback(server.stop)
        servers[arm] = server
    return servers


def _run_vllm_cell(
    server: VLLMOpenAIServer, settings: Settings, workload: str, concurrency: int
) -> tuple[dict, list[str]]:
    """One cell on a running vLLM server, its prefix cache emptied first: its summary (with
    the acceptance rate from its speculative counters) and its replies."""
    requests = requests_for(workload, settings, concurrency)
    server.reset()
    warm_up(server.port, requests, concurrency, settings.model)
    before = server.spec_counters()
    timings, wall = run_cell(server.port, requests, concurrency, settings.model)
    after = server.spec_counters()
    acceptance = None
    if before is not None and after is not None and after[1] > before[1]:
        acceptance = (after[0] - before[0]) / (after[1] - before[1])
    return cell_summary(timings, wall, acceptance), [t.text for t in timings]


def _vllm_report(settings: Settings, runs: dict, texts: dict, info: dict) -> dict:
    """vLLM's cells, and standard/vllm and fast/vllm-ngram ratios: medians of the per-repeat
    ratios, each of a repeat's posttrain cell and its vLLM cell."""
    arms: dict = {}
    ratios: dict = {}
    identical: dict = {}
    for workload in settings.workloads:
        for arm in VLLM_ARMS:
            for concurrency in settings.concurrencies:
                cell_runs = runs[(workload, arm, concurrency)]
                arms.setdefault(arm, {}).setdefault(workload, {})[str(concurrency)] = {
                    **cell_runs[0],
                    **({"runs": cell_runs} if len(cell_runs) > 1 else {}),
                }
        ratios[workload] = {}
        for ours, theirs in VLLM_COUNTERPARTS:
            name = counterpart_ratio_name(ours, theirs)
            by_repeat = {c: _per_repeat(runs, workload, ours, theirs, c) for c in settings.concurrencies}
            ratios[workload][name] = {str(c): round(statistics.median(r), 3) for c, r in by_repeat.items()}
            if settings.repeats > 1:
                ratios[workload][f"{name}_by_repeat"] = {str(c): [round(x, 3) for x in r] for c, r in by_repeat.items()}
        identical[workload] = {
            str(c): texts[(workload, "vllm", c)] == texts[(workload, "standard", c)] for c in settings.concurrencies
        }
    return {
        "version": info.get("version", "?"),
        "ngram": NGRAM_SPECULATION,
        "omp_threads_bind": info.get("omp_threads_bind"),
        "cells": arms,
        "ratios": ratios,
        # vLLM's kernels and (for chat) its chat template differ from the builtin engine's, so
        # identical greedy text is a record, not a goal
        "greedy_identical_to_standard": identical,
    }
