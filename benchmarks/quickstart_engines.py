"""The quickstart run with the builtin engine against the same run with the hf engine.

`make run` trains examples/quickstart.toml with the builtin engine. This runs that config twice,
shortened to --steps steps and otherwise unchanged (held-out evaluation before and after
included), once per engine, one after the other on the same machine, each a real
`posttrain train` process:

    python benchmarks/quickstart_engines.py [--steps 10] [--order builtin,hf] --out FILE.json

It prints one JSON object (and writes it to --out):

    {"runs": {"builtin": {"wall_s", "logprob_mismatch_max", "heldout_before", "heldout_after", ...},
              "hf": {...}},
     "hf_over_builtin_wall": hf wall / builtin wall}

logprob_mismatch_max is the largest per-step value the trainer recorded (the largest gap between
the engine's logprob of a sampled token and the trainer's recomputation of it).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
import tomllib
from pathlib import Path

from posttrain.console import emit_benchmark

REPO = Path(__file__).resolve().parents[1]
QUICKSTART = REPO / "examples" / "quickstart.toml"
ENGINES = ("builtin", "hf")


def log(message: str) -> None:
    print(f"[quickstart_engines {time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)


def write_config(engine: str, steps: int, directory: Path) -> Path:
    """The quickstart config with only the engine and the step count changed."""
    from posttrain.config import dump_config, parse_config

    data = tomllib.loads(QUICKSTART.read_text())
    data["engine"]["backend"] = engine
    data["train"]["steps"] = steps
    data["train"]["checkpoint_every"] = min(data["train"].get("checkpoint_every", steps), steps)
    path = directory / f"quickstart-{engine}.toml"
    path.write_text(dump_config(parse_config(data, QUICKSTART)))
    return path


def run_once(engine: str, steps: int, directory: Path) -> dict:
    config = write_config(engine, steps, directory)
    out = directory / f"run-{engine}"
    env = {**os.environ, "OMP_NUM_THREADS": os.environ.get("OMP_NUM_THREADS", "2")}
    log(f"{engine}: posttrain train {config.name} ({steps} steps) ...")
    started = time.perf_counter()
    done = subprocess.run(
        [str(Path(sys.executable).parent / "posttrain"), "train", str(config), "--out", str(out)],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    wall = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"{engine}: posttrain train failed (exit {done.returncode}):\n{done.stderr[-3000:]}")
    records = [json.loads(line) for line in (out / "metrics.jsonl").read_text().splitlines() if line.strip()]
    summary = json.loads((out / "summary.json").read_text())
    row = {
        "wall_s": wall,
        "steps": len(records),
        "logprob_mismatch_max": max(r.get("logprob_mismatch_max", 0.0) for r in records),
        "step_s_mean": sum(r["step_s"] for r in records) / len(records),
        "rollout_s_mean": sum(r["rollout_s"] for r in records) / len(records),
        "heldout_before": summary["eval_before"]["overall"],
        "heldout_after": summary["eval_after"]["overall"],
        "load_average_after": os.getloadavg()[0],
    }
    log(
        f"{engine}: {wall:.1f} s, mismatch max {row['logprob_mismatch_max']:.2e}, "
        f"held-out {row['heldout_before']:.3f} -> {row['heldout_after']:.3f}"
    )
    return row


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--steps", type=int, default=10, help="training steps per run (default 10)")
    parser.add_argument(
        "--order", default="builtin,hf", help="engines to run, in this order (comma-separated; default builtin,hf)"
    )
    parser.add_argument("--out", type=Path, help="also write the JSON here")
    args = parser.parse_args(argv)
    order = [name.strip() for name in args.order.split(",") if name.strip()]
    if not order or any(name not in ENGINES for name in order):
        parser.error(f"--order {args.order!r}: choose from {', '.join(ENGINES)}")
    if args.steps < 1:
        parser.error("--steps must be >= 1")
    with tempfile.TemporaryDirectory(prefix="quickstart-engines-") as tmp:
        runs = {engine: run_once(engine, args.steps, Path(tmp)) for engine in order}
    result = {
        "config": str(QUICKSTART.relative_to(REPO)),
        "steps": args.steps,
        "order": order,
        "runs": runs,
        "hf_over_builtin_wall": (
            runs["hf"]["wall_s"] / runs["builtin"]["wall_s"] if "hf" in runs and "builtin" in runs else None
        ),
    }
    emit_benchmark(result, args.out)
    return result


if __name__ == "__main__":
    main()
