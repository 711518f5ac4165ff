"""`posttrain sandbox ...`: run a command in a fresh sandbox; benchmark the sandbox layer."""

from __future__ import annotations

import sys
from pathlib import Path

import typer

from posttrain.console import command_group, console, emit_benchmark, fail, renamed_option
from posttrain.errors import PosttrainError

app = command_group("Isolated sandboxes for agent commands (bubblewrap + overlayfs + cgroups).")


@app.command("run", context_settings={"allow_interspersed_args": False})
def run_command(
    cmd: list[str] | None = typer.Argument(
        None, help="Required: the command and its arguments, after -- (posttrain sandbox run -- ls -la)."
    ),
    memory: int | None = typer.Option(2048, "--memory", help="Memory limit in MB."),
    pids: int | None = typer.Option(256, "--pids", help="Process/thread limit."),
    cpus: float | None = typer.Option(1.0, "--cpus", help="CPU share in cores."),
    disk: int | None = typer.Option(1024, "--disk", help="Workspace size limit in MB."),
    timeout: float = typer.Option(600.0, "--timeout", help="Wall-time limit in seconds."),
    network: bool = typer.Option(False, "--network", help="Allow network access (off by default)."),
    workspace: Path | None = typer.Option(None, "--workspace", help="Copy this directory into /app first."),
    backend: str | None = typer.Option(None, "--backend", help="bwrap (default on Linux as root), local or docker."),
) -> None:
    """Run one command in a fresh sandbox, stream its output and exit with its exit code.

    Example: posttrain sandbox run --memory 256 --timeout 10 -- python3 -c "print(1)"
    """
    from pydantic import ValidationError

    if not cmd:
        fail('no command: give it after --, e.g. posttrain sandbox run --memory 256 -- python3 -c "print(1)"')
    from posttrain.sandbox.factory import create_sandbox
    from posttrain.sandbox.interface import SandboxLimits, SandboxSpec

    try:
        limits = SandboxLimits(memory_mb=memory, pids=pids, cpus=cpus, disk_mb=disk, timeout_s=timeout)
    except ValidationError as exc:
        first = exc.errors()[0]
        option = {"memory_mb": "memory", "disk_mb": "disk", "timeout_s": "timeout"}.get(
            first["loc"][0], first["loc"][0]
        )
        fail(f"--{option}: {first['msg']}")
    if workspace is not None and not workspace.is_dir():
        fail(f"--workspace {workspace}: not a directory")
    try:
        with create_sandbox(SandboxSpec(limits=limits, allow_network=network), backend) as sandbox:
            if workspace is not None:
                sandbox.upload(workspace, "/app")
            argv = list(cmd)
            if hasattr(sandbox, "exec_streaming"):
                result = sandbox.exec_streaming(argv, timeout=timeout)
            else:
                result = sandbox.exec(argv, timeout=timeout)
                sys.stdout.write(result.stdout)
                sys.stderr.write(result.stderr)
    except PosttrainError as exc:
        fail(str(exc))
    if result.timed_out:
        console.print(f"sandbox: killed after the {timeout:g} s time limit", highlight=False)
    elif result.oom_killed:
        console.print(f"sandbox: killed: out of memory (limit {memory} MB)", highlight=False)
    raise typer.Exit(code=result.exit_code)


@app.command("gc")
def gc_command(
    base: Path | None = typer.Option(
        None, "--base", help="Sandbox directory (default $POSTTRAIN_SANDBOX_DIR or /tmp/posttrain-sandboxes)."
    ),
) -> None:
    """Remove what sandboxes of killed processes left behind: tmpfs mounts, directories, cgroups."""
    from posttrain.sandbox.bwrap_backend import default_base_dir
    from posttrain.sandbox.garbage import collect_garbage

    removed = collect_garbage(base or default_base_dir())
    console.print(f"removed {len(removed)} stale sandbox(es)", highlight=False)


@app.command("bench")
def bench_command(
    output: Path | None = typer.Option(None, "--output", "-o", metavar="FILE", help="Also write the JSON here."),
    out: Path | None = typer.Option(None, "--out", hidden=True, help="Deprecated spelling of --output."),
    iterations: int = typer.Option(100, "--iterations", help="Samples per latency figure."),
    max_idle: int = typer.Option(1000, "--max-idle", help="Stop the idle-sandbox count at this many."),
) -> None:
    """Measure the sandbox layer side by side with plain subprocess: create+exec+close, snapshot
    and restore of 1 MB and 200 MB workspaces, idle sandboxes held at once, pool hand-out."""
    output = renamed_option(output, out, "--out", "--output")
    from posttrain.sandbox.benchmark import run_benchmark

    try:
        report = run_benchmark(iterations=iterations, max_idle=max_idle, console=console)
    except PosttrainError as exc:
        fail(str(exc))
    emit_benchmark(report, output)
