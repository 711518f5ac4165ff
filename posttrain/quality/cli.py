"""`posttrain inspect`: the environment quality gate's inspection."""

from __future__ import annotations

from pathlib import Path

import typer

from posttrain.console import argument_or_option, console, emit_json, fail
from posttrain.errors import PosttrainError


def inspect_command(
    path: Path | None = typer.Argument(
        None,
        metavar="PATH",
        help="A Harbor task directory, or a suite directory of them (tasks/terminal); or answer domains: a train "
        "config (its [[domains]]), or one source (reasoning-gym:NAME, a .jsonl file, parquet:PATH, hf-dataset:PATH, "
        "scene:1); or give it as --tasks.",
    ),
    tasks: Path | None = typer.Option(
        None, "--tasks", metavar="PATH", help="The same as PATH, spelled as posttrain eval spells it."
    ),
    out: str = typer.Option(
        ...,
        "--out",
        "-o",
        metavar="DIR|URL",
        help="Where report.json, report.md, report.html and quarantine.txt go: a directory, or an fsspec URL "
        "(s3://bucket/inspections/NAME: written in a working copy under $POSTTRAIN_CACHE/outputs/ and published "
        "there when the command ends).",
    ),
    policy: str | None = typer.Option(
        None,
        "--model",
        help="Also run the signal check with this model "
        "(smollm2-135m, hf:DIR, builtin:DIR, vllm:DIR, openai:URL#MODEL; as in posttrain eval --model).",
    ),
    samples: int = typer.Option(
        4,
        "--attempts",
        "-k",
        min=1,
        help="The model's attempts per task for the signal check. 4, where eval's -k is 1 (pass@1): whether a "
        "task gives a learning signal (a pass rate strictly between 0 and 1) cannot be judged from one sample.",
    ),
    repeats: int = typer.Option(
        3,
        "--repeats",
        "-r",
        min=1,
        help="Runs of the reference solution and of doing "
        "nothing; the verifier must agree with itself across them. A task gets all of them "
        "when its tests or solution use randomness, the clock, process ids, hash order, "
        "sleeps or concurrency, or when its first runs' outputs differ.",
    ),
    min_repeats: int = typer.Option(
        2,
        "--min-repeats",
        min=1,
        help="Runs each for a task with no source of "
        "nondeterminism whose first runs look alike (--min-repeats R: always R).",
    ),
    probes: str | None = typer.Option(
        None, "--probes", help="Only these exploit probes (comma-separated); default: all."
    ),
    concurrency: int | None = typer.Option(
        None,
        "--concurrency",
        "-j",
        min=1,
        help="Trials (sandboxes) at once (default: one per CPU core plus one; verifiers are mostly CPU-bound).",
    ),
    max_seconds: float = typer.Option(
        600.0, "--max-seconds", min=1.0, help="Cap on a task's own agent and verifier timeouts while inspecting."
    ),
    build_timeout: float = typer.Option(600.0, "--build-timeout", min=1.0, help="Cap on an environment build."),
    max_steps: int = typer.Option(10, "--max-steps", min=1, help="Turns per policy episode (signal check)."),
    reply_tokens: int = typer.Option(256, "--reply-tokens", min=8, help="New tokens per turn (signal check)."),
    backend: str | None = typer.Option(
        None, "--backend", help="Sandbox backend: bwrap (default as root on Linux), local or docker."
    ),
    items: int = typer.Option(
        200, "--items", min=1, help="Answer domains: items checked per domain (the held-out ones first)."
    ),
    probe_items: int = typer.Option(
        16, "--probe-items", min=1, help="Answer domains: items each empty/constant/garbage probe answer is tried on."
    ),
    heldout: int | None = typer.Option(
        None,
        "--heldout",
        min=0,
        help="Answer domains: held-out items per domain (default: a config's own; a quarter of a source, at most 100).",
    ),
    probe_set: int = typer.Option(
        8, "--probe-set", min=1, help="Answer domains with --model: items per domain the model answers -k times."
    ),
    names: str | None = typer.Option(None, "--names", help="Only these task directories (comma-separated)."),
    tags: str | None = typer.Option(None, "--tags", help="Only tasks whose task.toml has all these tags."),
    no_cache: bool = typer.Option(
        False,
        "--no-cache",
        help="Inspect every task again, even one whose files, "
        "environment, options and the checking code are unchanged since a stored "
        "inspection (the new reports replace the stored ones).",
    ),
    cache_dir: Path | None = typer.Option(
        None,
        "--cache-dir",
        help="Where stored inspections live (default: $POSTTRAIN_CACHE/inspections, ~/.cache/posttrain/inspections).",
    ),
) -> None:
    """Check every task before it may reach training, and quarantine the bad ones.

    Exit status: 0 when every task passed, 1 when any was quarantined (the reports say why),
    2 for bad input.

    Per task: it loads, with no key in task.toml that Harbor would ignore (else invalid); the
    environment builds and the packages its Dockerfile installs are present, the reference
    solution fits the task's time and memory limits and does not need a network the task
    disallows (else unhealthy); the reference solution passes (else unsolvable); doing nothing
    fails and the verifier runs cleanly (else broken_verifier); both give the same result over
    repeated runs (else flaky: --repeats runs for a task that could vary, --min-repeats for one
    that shows no sign of it); ten scripted exploit agents (editing tests, pytest hooks, writing
    the reward file, shadowing binaries, reading the solution, hard-coding outputs, injecting
    code into outputs, exiting early, code that exits 0 as soon as it loads, a planted verdict)
    all fail (else exploitable); with --model, the model's pass rate over its --attempts
    episodes is strictly between 0 and 1 (else no_signal). Static lint adds warnings. Every
    check keeps its evidence: commands, exit codes, rewards, timings.

    A task whose files, built environment, options and the checking code are unchanged since
    an earlier inspection on this machine gets that stored report back (marked cached_from)
    instead of being inspected again; --no-cache inspects it anew.

    Give the quarantine list to training and evaluation: `quarantine = "DIR/quarantine.txt"`
    in a run config, or `posttrain eval --quarantine DIR/quarantine.txt`.

    Answer domains (a train config, or a source): per item, the reference answer passes the
    domain's own verifier (else unsolvable); no other item has the same prompt, and no training
    item the prompt of a held-out one (else invalid). Per domain, the verifier refuses an
    empty, constant ("0", "yes", "no", the most common reference) and garbage (random text, a
    very long string, the prompt echoed) answer where it is wrong (else exploitable); at least
    one item is usable; with --model, the model's pass rate over -k replies to each of
    --probe-set items is strictly between 0 and 1 (else no_signal). A domain that is not ok is
    dropped whole; `quality_gate = true` in a train config runs the same gate at the start.

    \b
    posttrain inspect tasks/terminal --out runs/inspect
    posttrain inspect --tasks tasks/terminal --out runs/inspect-smol --model smollm2-135m -k 4
    posttrain inspect examples/hundred_domains.toml --out runs/inspect-answers --items 64
    posttrain inspect reasoning-gym:basic_arithmetic --out runs/inspect-arith --model smollm2-135m
    """
    path = argument_or_option(path, tasks, "--tasks", "posttrain inspect --tasks PATH --out DIR (or PATH alone)")
    from posttrain.quality.answer_inspection import AnswerInspectOptions
    from posttrain.quality.answer_suite import inspect_answers, names_answer_domains
    from posttrain.quality.inspector import InspectOptions
    from posttrain.quality.probes import chosen_probes
    from posttrain.quality.suite_inspection import inspect_suite

    try:
        if names_answer_domains(str(path)) and not Path(path).is_dir():
            report = inspect_answers(
                str(path),
                out,
                AnswerInspectOptions(max_items=items, probe_items=probe_items),
                heldout=heldout,
                policy=policy,
                samples=samples,
                probe_set=probe_set,
                reply_tokens=reply_tokens,
                console=console,
            )
        else:
            options = InspectOptions(
                repeats=repeats,
                min_repeats=min_repeats,
                probes=chosen_probes(probes),
                backend=backend,
                use_cache=not no_cache,
                cache_dir=cache_dir,
                build_timeout_s=build_timeout,
                max_agent_s=max_seconds,
                max_verifier_s=max_seconds,
                **({"concurrency": concurrency} if concurrency else {}),
            )
            report = inspect_suite(
                path,
                out,
                options,
                names=names,
                tags=tags,
                policy=policy,
                samples=samples,
                max_steps=max_steps,
                reply_tokens=reply_tokens,
                console=console,
            )
    except PosttrainError as exc:
        fail(str(exc))
    summary = report["summary"]
    emit_json({"out": str(out), **_summary_fields(summary)}, None)
    if summary["quarantined"]:
        raise typer.Exit(code=1)


def _summary_fields(summary: dict) -> dict:
    """What the command prints of report.json's summary."""
    if summary.get("kind") == "answer":
        keys = ("domains", "items_checked", "items_quarantined", "duration_s")
        return {k: summary[k] for k in keys}
    return {
        "n_tasks": summary["n_tasks"],
        "quarantined": summary["quarantined"],
        "verdicts": {k: v for k, v in summary["verdicts"].items() if v},
        "duration_s": summary["duration_s"],
        "from_cache": summary["from_cache"],
    }
