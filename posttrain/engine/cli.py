"""`posttrain engine ...`: the inference engines, measured."""

from __future__ import annotations

from pathlib import Path

import typer

from posttrain.console import command_group, console, emit_benchmark, emit_json, fail
from posttrain.errors import PosttrainError

app = command_group("Inference engines (hf, builtin, vllm) behind one interface.")


@app.callback()
def _engine() -> None:
    """Inference engines (hf, builtin, vllm) behind one interface."""


@app.command("bench")
def bench_command(
    out: Path | None = typer.Option(None, "--out", "-o", help="Also write the JSON here."),
    model: str = typer.Option(
        "smollm2-135m", "--model", help="Model spec: smollm2-135m, tiny-llama or a HF directory."
    ),
    prompts: int = typer.Option(16, "--prompts", help="Group workload: distinct chat-templated prompts."),
    n: int = typer.Option(8, "--n", help="Group workload: samples per prompt (the GRPO group size)."),
    max_tokens: int = typer.Option(
        128, "--max-tokens", help="Group workload: new tokens per sample (multiturn uses half of it per turn)."
    ),
    turns: int = typer.Option(4, "--turns", help="Multiturn workload: turns per conversation."),
    conversations: int = typer.Option(8, "--conversations", help="Multiturn workload: conversations."),
    backends: str = typer.Option("hf,builtin,vllm", "--backends", help="Comma-separated backends to run."),
) -> None:
    """Run the same requests through each backend side by side; print a JSON report.

    \b
    Each workload runs on a fresh engine per backend (empty prefix cache), after
    a short warm-up, at temperature 1.0 with fixed seeds; EOS stops a sample as
    it does in training.

    \b
    group      PROMPTS chat-templated prompts x N samples x MAX_TOKENS new tokens,
               one generate() call (GRPO group sampling).
    multiturn  CONVERSATIONS agent conversations x TURNS turns, MAX_TOKENS/2 new
               tokens a turn; a turn's prompt is the previous prompt + its
               completion + a new user message; one generate() call a turn.

    \b
    Reported per workload and backend:
      tok_s            output tokens / wall second (fair across backends that
                       stop at different lengths)
      wall_s, output_tokens
      prefix_hit_rate  builtin only: prompt tokens served from the prefix cache /
                       all prompt tokens of the workload
      ratios           builtin/hf and builtin/vllm tok_s
    and once: matmul_peak_flops (best fp32 2048x2048 torch.mm; the bf16 one only
    where bf16 is native), cpu (model, flags, torch kernel level, bf16 probe), and
    builtin_flops_fraction: builtin's model FLOP/s on the group workload
    (2 x (non-embedding + lm_head params) x computed tokens / wall s) over that peak.

    \b
    A backend that cannot run here (e.g. vllm not installed) is null, with the
    reason under "unavailable". Progress goes to stderr, the JSON to stdout (and
    to --out).

    \b
    Example: posttrain engine bench --out bench.json --backends hf,builtin
    """
    from posttrain.engine.benchmark import parse_backends, run_benchmark

    try:
        report = run_benchmark(
            model_spec=model,
            prompts=prompts,
            n=n,
            max_tokens=max_tokens,
            turns=turns,
            conversations=conversations,
            backends=parse_backends(backends),
            console=console,
        )
    except PosttrainError as exc:
        fail(str(exc))
    emit_benchmark(report, out)


@app.command("verify")
def verify_command(
    model: str = typer.Argument(
        ..., help="A Hugging Face model directory (hf:DIR or DIR), or smollm2-135m / tiny-llama."
    ),
    max_tokens: int = typer.Option(16, "--max-tokens", help="Greedy tokens generated per prompt."),
    out: Path | None = typer.Option(None, "--out", "-o", help="Also write the JSON here."),
) -> None:
    """Check that the builtin engine computes MODEL as transformers does; print JSON.

    \b
    On a fixed set of chat prompts:
      greedy_identical      the engine's greedy continuation equals transformers'
                            generate() token for token, on every prompt
      logprob_mismatch_max  the largest |engine - trainer| logprob over every
                            generated token (the trainer's full-sequence forward on
                            the engine's kernels); 0.0 is zero train/inference mismatch
    plus model_type, supported, prompts, greedy_mismatches (prompt indices),
    tokens_compared and row_invariance (the start-up kernel probe).

    \b
    Supported families: llama, qwen2, qwen3, mistral (sliding window), gemma.
    Any other model_type is refused before loading weights: the JSON says
    "supported": false and the error line names the supported ones (exit 2).
    Exit 1 when greedy outputs differ.

    \b
    Example: posttrain engine verify hf:./my-qwen3-checkpoint
    """
    from posttrain.evaluate.engine_agreement import verify_engine

    try:
        with console.status(f"verifying the builtin engine on {model}") as status:
            report = verify_engine(model, max_tokens, progress=lambda text: status.update(f"{model}: {text}"))
    except PosttrainError as exc:
        fail(str(exc))
    emit_json(report, out)
    if not report["supported"]:
        fail(report["error"])
    if not report["greedy_identical"]:
        raise typer.Exit(code=1)
