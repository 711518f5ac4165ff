"""`posttrain engine bench`: the inference engines, measured.

`posttrain engine verify` checks the builtin engine against the trainer, which engine/ may not
import: evaluate/cli.py defines it and posttrain/cli.py adds it to this group."""

from __future__ import annotations

from pathlib import Path

import typer

from posttrain.console import command_group, console, emit_benchmark, fail, renamed_option
from posttrain.errors import PosttrainError

app = command_group("Inference engines (hf, builtin, vllm) behind one interface.")


@app.callback()
def _engine() -> None:
    """Inference engines (hf, builtin, vllm) behind one interface."""


@app.command("bench")
def bench_command(
    output: Path | None = typer.Option(None, "--output", "-o", metavar="FILE", help="Also write the JSON here."),
    out: Path | None = typer.Option(None, "--out", hidden=True, help="Deprecated spelling of --output."),
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
    to --output).

    \b
    Example: posttrain engine bench --output bench.json --backends hf,builtin
    """
    output = renamed_option(output, out, "--out", "--output")
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
    emit_benchmark(report, output)
