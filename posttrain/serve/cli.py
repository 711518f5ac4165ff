"""`posttrain serve MODEL`: an OpenAI-compatible server; `posttrain serve bench`: its benchmark."""

from __future__ import annotations

from pathlib import Path

import typer
from typer.core import TyperGroup

from posttrain.console import console, emit_benchmark, fail, renamed_option, spinner
from posttrain.errors import PosttrainError
from posttrain.ports import check_port_free
from posttrain.serve.api_keys import exposure_warning, read_key_file
from posttrain.serve.rate_limit import parse_rate_limit


class _ModelOrSubcommand(TyperGroup):
    """`posttrain serve MODEL ...` runs the server (the `run` command); `posttrain serve bench`
    the benchmark: a first argument that is no subcommand is the model."""

    def parse_args(self, ctx, args):
        if args and not args[0].startswith("-") and args[0] not in self.commands:
            args = ["run", *args]
        return super().parse_args(ctx, args)


app = typer.Typer(
    cls=_ModelOrSubcommand,
    help="Serve a model behind an OpenAI-compatible API (posttrain serve MODEL), or benchmark the "
    "standard and fast variants (posttrain serve bench).",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)


@app.command("run")
def run_command(
    model: str = typer.Argument(
        ..., help="smollm2-135m, tiny-llama, a Hugging Face directory, or a run's checkpoint (RUN/checkpoints/step-N)."
    ),
    variant: str = typer.Option(
        "standard", "--variant", help="standard, or fast: speculative decoding, the same output (see docs/serving.md)."
    ),
    host: str = typer.Option(
        "127.0.0.1",
        "--host",
        help="Address to listen on: this machine only by default; 0.0.0.0 for every interface (without an "
        "API key that prints a warning).",
    ),
    port: int = typer.Option(8000, "--port", min=1, max=65535),
    max_concurrency: int = typer.Option(
        32, "--max-concurrency", min=1, help="Requests decoded together; more wait in a queue."
    ),
    max_queue: int = typer.Option(
        64, "--max-queue", min=0, help="Requests that may wait; past that: 429 + Retry-After."
    ),
    request_timeout: float = typer.Option(
        600.0, "--request-timeout", min=1.0, help="Every request's deadline, seconds."
    ),
    max_model_len: int | None = typer.Option(
        None, "--max-model-len", min=16, help="Longest prompt + reply in tokens (default: the model's context)."
    ),
    served_model_name: str | None = typer.Option(
        None, "--served-model-name", help="The model's id in the API (default: MODEL as given)."
    ),
    quantize: str | None = typer.Option(
        None,
        "--quantize",
        help="int8: int8 weights for the fast variant on CPU; faster and lossy (accuracy in docs/BENCHMARKS.md).",
    ),
    engine: str = typer.Option(
        "builtin",
        "--engine",
        help="builtin, or vllm where installed (fast variant: vLLM's n-gram speculation).",
    ),
    compile_step: bool = typer.Option(
        False,
        "--compile",
        help="Compile the builtin engine's decoder layers with torch.compile at start-up (15-40 s): "
        "the same tokens, logprobs within ~1e-5 (not the trainer's bits). Since the eager step's "
        "attention went native it is level with it (1.01x in process at 16 sequences), so it is "
        "off by default (docs/serving.md).",
    ),
    kv_cache_dtype: str = typer.Option(
        "auto",
        "--kv-cache-dtype",
        help="The builtin engine's KV cache: auto (the model's float dtype), fp32, or int8: int8 keys and "
        "values with a scale per token and head, about a quarter of the bytes a token; lossy, the logprob "
        "gap is small (docs/serving.md). Not with --compile.",
    ),
    system_prompt: str | None = typer.Option(
        None,
        "--system-prompt",
        metavar="TEXT",
        help="The system message of chat requests that bring none and no tools. Default: the system prompt "
        "a trained agent's checkpoint saved (its agent_settings.json), else none; '' turns it off.",
    ),
    api_key: list[str] = typer.Option(
        [],
        "--api-key",
        metavar="KEY",
        envvar="POSTTRAIN_API_KEY",
        help="Require `Authorization: Bearer KEY` on every /v1 request (401 otherwise; /health and /metrics "
        "stay open). Repeat for several keys; also read from $POSTTRAIN_API_KEY (keys separated by spaces).",
    ),
    api_key_file: Path | None = typer.Option(
        None,
        "--api-key-file",
        metavar="FILE",
        help="More API keys, one a line ('#' starts a comment line); a missing or empty file is an error.",
    ),
    rate_limit: str | None = typer.Option(
        None,
        "--rate-limit",
        metavar="N/s|N/min",
        help="Requests a client may make: a token bucket of N per key (per client address without keys), "
        "refilled over the period; past it 429 with Retry-After. E.g. 60/min.",
    ),
    max_body_bytes: int | None = typer.Option(
        None,
        "--max-body-bytes",
        metavar="N",
        help="Larger request bodies are refused with 413 before they are read (default 4 MiB).",
    ),
    record: Path | None = typer.Option(
        None,
        "--record",
        metavar="DIR",
        help="Append every finished chat completion to DIR/traces.jsonl: the conversation as the model saw "
        "it, the exact token ids and logprobs, the model and its tokenizer; rows `posttrain sft` trains on "
        "([sft] chat_data). Each row is fsynced before the next (docs/serving.md).",
    ),
) -> None:
    """Serve MODEL at http://HOST:PORT/v1 (chat/completions, completions, models), with /health
    and /metrics (Prometheus). Clients: any OpenAI client, e.g.
    `posttrain eval --model openai:http://127.0.0.1:8000/v1#smollm2-135m`. A port in use is
    one error line before any model loads.

    It listens on 127.0.0.1 unless --host says otherwise. With --api-key or --api-key-file every
    /v1 request needs one of the keys (eval sends $OPENAI_API_KEY, or the variable its
    --api-key-env names); --rate-limit caps each key's (or address's) requests.

    A trained agent's checkpoint (a directory with agent_settings.json) gives chat requests that
    bring no system message and no tools the system prompt it was trained with (one line at
    start-up says so); --system-prompt TEXT sets another, --system-prompt '' none."""
    try:
        if any(not key.strip() or key != key.strip() for key in api_key):
            raise PosttrainError("--api-key: a key cannot be empty or begin or end with spaces")
        keys = [*api_key, *(read_key_file(api_key_file) if api_key_file is not None else [])]
        limit = parse_rate_limit(rate_limit) if rate_limit is not None else None
        check_port_free(host, port, "posttrain serve --port")
    except PosttrainError as exc:
        fail(str(exc))
    exposure = exposure_warning(host, bool(keys))
    if exposure:
        console.print(f"warning: {exposure}", markup=False, highlight=False, soft_wrap=True)
    try:
        from posttrain.serve.server import ServerSettings, build_server, serve
    except ImportError as exc:
        fail(f"posttrain serve needs fastapi and uvicorn ({exc}): pip install 'posttrain[serve]'")
    from posttrain.serve.default_system_prompt import default_system_prompt

    try:
        chat_system, chat_system_line = default_system_prompt(model, system_prompt)
    except PosttrainError as exc:
        fail(str(exc))
    settings = ServerSettings(
        model,
        variant,
        served_model_name,
        max_concurrency,
        max_queue,
        request_timeout,
        max_model_len,
        quantize=quantize,
        engine=engine,
        compile_step=compile_step,
        kv_cache_dtype=kv_cache_dtype,
        system_prompt=chat_system or "",
        record_dir=record,
        api_keys=tuple(keys),
        rate_limit=limit,
    )
    if max_body_bytes is not None:
        settings.max_body_bytes = max_body_bytes
    try:
        label = variant + (f", {quantize} weights" if quantize else "") + (f", {engine}" if engine != "builtin" else "")
        compiling = compile_step and engine == "builtin" and not quantize  # int8 layers step eagerly
        label += ", compiled" if compiling else ""
        label += f", {kv_cache_dtype} KV cache" if kv_cache_dtype not in ("auto", "fp32") else ""
        guarded = f"{len(set(keys))} API key{'s' if len(set(keys)) != 1 else ''}" if keys else "no API key"
        guarded += f", rate limit {limit} per {'key' if keys else 'client address'}" if limit else ""
        with spinner(f"loading {model} ({label}){' and compiling its step' if compiling else ''}"):
            built = build_server(settings)
        console.print(
            f"serving [bold]{settings.served_model_name or model}[/] ({label}) at http://{host}:{port}/v1 ({guarded})",
            highlight=False,
        )
        if chat_system_line:
            console.print(chat_system_line, markup=False, highlight=False, soft_wrap=True)
        serve(built, host, port)
    except PosttrainError as exc:
        fail(str(exc))


@app.command("bench")
def bench_command(
    output: Path | None = typer.Option(None, "--output", "-o", metavar="FILE", help="Also write the JSON here."),
    out: Path | None = typer.Option(None, "--out", hidden=True, help="Deprecated spelling of --output."),
    model: str = typer.Option("smollm2-135m", "--model", help="The model both variants serve."),
    concurrency_levels: str | None = typer.Option(
        None,
        "--concurrency-levels",
        metavar="N,N,...",
        help="Comma-separated client counts, a cell each (default 1,4,16). A list, where eval's --concurrency "
        "is one number.",
    ),
    concurrency: str | None = typer.Option(
        None, "--concurrency", hidden=True, help="Deprecated spelling of --concurrency-levels."
    ),
    agent_max_tokens: int = typer.Option(48, "--agent-max-tokens", min=1, help="New tokens per agent turn."),
    chat_max_tokens: int = typer.Option(32, "--chat-max-tokens", min=1, help="New tokens per chat answer."),
    workloads: str = typer.Option("agent,chat", "--workloads", help="Comma-separated: agent, chat."),
    repeats: int = typer.Option(
        1,
        "--repeats",
        min=1,
        help="Runs of each cell, the variants back to back in alternating order; the ratio is the median.",
    ),
    quantize: str | None = typer.Option(
        None, "--quantize", help="int8: the fast variant's servers load int8 weights (lossy; serve --quantize)."
    ),
    compile_step: bool = typer.Option(
        False, "--compile", help="Every posttrain server compiles its decoder layers (serve --compile)."
    ),
    requests_per_client: int = typer.Option(
        2,
        "--requests-per-client",
        help="Requests per client in a cell (at least 8 a cell), up to the workload's distinct requests "
        "(24 agent turns, 64 chat questions): more make a cell longer and its ratio less noisy.",
    ),
    server_cpus: str = typer.Option(
        "",
        "--server-cpus",
        help="Comma-separated CPU ids to pin every server to (posttrain's and vLLM's, with the processes "
        "they start), e.g. 0: the same cores for each, where vLLM's server is otherwise two processes.",
    ),
    vllm: str = typer.Option(
        "auto",
        "--vllm",
        help="Also run vLLM's own OpenAI server (.venv-vllm, make bench-engines) on the same cells, plain "
        "and with n-gram speculation: auto (where .venv-vllm exists), on, off.",
    ),
) -> None:
    """Start the server in each variant and drive it with concurrent streaming clients over HTTP.

    \b
    Workloads: agent (turns of real multi-turn terminal episodes: long shared
    prompts, replies that copy from the context) and chat (short questions);
    greedy. Each cell runs on a fresh server process. Reported per variant and
    concurrency: output tokens/s, time to first token p50/p95, inter-token
    latency p50/p95, speculative acceptance rate; per workload whether greedy
    outputs were identical across variants, and the fast/standard ratios.
    Where .venv-vllm exists, vLLM's own server runs the same cells too (its
    two servers, plain and n-gram, start once), each right next to the
    posttrain cell it is compared with, and the standard/vllm and
    fast/vllm-ngram ratios (medians of the per-repeat ratios) are reported.

    \b
    Example: posttrain serve bench --output benchmarks/results/serve_bench.json
    """
    output = renamed_option(output, out, "--out", "--output")
    concurrency = renamed_option(concurrency_levels, concurrency, "--concurrency", "--concurrency-levels") or "1,4,16"
    from posttrain.serve.bench import Settings, run_benchmark

    try:
        levels = tuple(int(c) for c in concurrency.split(",") if c.strip())
    except ValueError:
        fail(f"--concurrency-levels: expected comma-separated integers, got {concurrency!r}")
    if not levels or min(levels) < 1:
        fail("--concurrency-levels: expected client counts >= 1")
    try:
        cpus = tuple(int(c) for c in server_cpus.split(",") if c.strip())
    except ValueError:
        fail(f"--server-cpus: expected comma-separated CPU ids, got {server_cpus!r}")
    try:
        settings = Settings(
            model,
            levels,
            agent_max_tokens,
            chat_max_tokens,
            workloads=tuple(w.strip() for w in workloads.split(",") if w.strip()),
            repeats=repeats,
            quantize=quantize,
            compile_step=compile_step,
            requests_per_client=requests_per_client,
            server_cpus=cpus,
            vllm=vllm,
        )
        with spinner("benchmark") as status:
            report = run_benchmark(settings, progress=lambda label: status.update(f"serve bench: {label}"))
    except PosttrainError as exc:
        fail(str(exc))
    emit_benchmark(report, output)
