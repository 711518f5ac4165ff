"""`make smoke`: examples/smoke.toml trains the tiny random Llama for two steps that each update
it, and prints the run's summary."""

import json
import re
from pathlib import Path

from tests.cli.test_cli_errors import run_cli

ROOT = Path(__file__).parents[2]


def test_the_smoke_run_trains_two_steps_and_prints_its_summary(tmp_path):
    assert re.search(r"^smoke: setup\n.*\n.*posttrain train examples/smoke.toml", (ROOT / "Makefile").read_text(), re.M)
    assert "make smoke" in (ROOT / "README.md").read_text()[:3000]  # on the first screen
    out = tmp_path / "smoke"
    result = run_cli("train", str(ROOT / "examples" / "smoke.toml"), "--out", str(out))
    assert result.returncode == 0, result.stderr
    summary = json.loads(result.stdout)
    assert summary["steps"] == 2 and summary["model"] == "tiny-llama" and summary["n_heldout"] == 8
    # the run reports its own peak resident memory: the tiny model, torch and the engine, not nothing
    assert 100 < summary["peak_rss_mb"] < 8192 and summary["peak_rss_children_mb"] >= 0
    steps = [line for line in result.stderr.splitlines() if line.startswith("step ")]
    assert len(steps) == 2 and all("  loss " in line for line in steps), result.stderr  # each step updated
    records = [json.loads(line) for line in (out / "metrics.jsonl").read_text().splitlines()]
    assert [r["groups_kept"] for r in records] == [4, 4] and all(0 < r["reward_mean"] < 1 for r in records)
    assert (out / "checkpoints" / "step-2" / "model.safetensors").is_file()
