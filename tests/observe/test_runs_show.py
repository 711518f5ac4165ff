"""`posttrain runs show RUN`: a run's story as text, no browser. A warm-started run shows base ->
SFT -> RL (a base that scored 0.000 included) overall, per held-out set and per family with
intervals; a run without a warm start before -> after; a bad path is one error line."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from posttrain.curriculum.seesaw import wilson_interval
from tests.warm_start_run import SFT_STEPS, expected_pass_at_1, make_warm_start_run

ROOT = Path(__file__).resolve().parents[2]


def runs_show(path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "posttrain.cli", "runs", "show", str(path)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "OMP_NUM_THREADS": "1", "PYTHONPATH": str(ROOT), "COLUMNS": "200"},
    )


def line_starting(lines: list[str], prefix: str) -> str:
    found = [line for line in lines if line.strip().startswith(prefix)]
    assert len(found) == 1, (prefix, lines)
    return found[0]


@pytest.fixture(scope="module")
def warm_run(sink_run, tmp_path_factory):
    return make_warm_start_run(sink_run, tmp_path_factory.mktemp("story") / "agent-run")


def test_a_warm_started_run_tells_base_sft_and_rl(warm_run):
    shown = runs_show(warm_run)
    assert shown.returncode == 0, shown.stderr
    lines = shown.stdout.splitlines()
    assert lines[0].startswith("run agent-run (") and "finished" in lines[0]
    assert line_starting(lines, "config ").startswith(f"config {warm_run / 'config.toml'}: model tiny-llama, sync")
    assert line_starting(lines, "stages:") == f"stages: base eval -> SFT {SFT_STEPS} steps -> RL 2/2 steps"
    assert "held-out pass@1 (base -> SFT -> RL)" in lines

    expected = expected_pass_at_1()
    overall = line_starting(lines, "overall, n=40:")
    low, high = wilson_interval(0, 40)
    base, sft, rl = expected["overall"]
    assert f"{base:.3f} [{low:.2f}, {high:.2f}] -> {sft:.3f}" in overall and f"-> {rl:.3f}" in overall
    assert base == 0.0 and "SFT - base +0.425 [" in overall and "RL - SFT +0.200 [" in overall
    for name, n in (("instances", 16), ("templates", 8), ("families", 8), ("handwritten", 8)):
        line = line_starting(lines, f"{name} (held-out set), n={n}:")
        cells = [cell.split(" [")[0] for cell in line.split(": ", 1)[1].split("  (")[0].split(" -> ")]
        assert cells == [f"{v:.3f}" for v in expected[name]], line
        assert "RL - base" in line
    for family in ("archives", "files-dirs"):
        line = line_starting(lines, f"family {family}:")
        assert line.split(": ", 1)[1] == " -> ".join(f"{v:.3f}" for v in expected[family])

    assert line_starting(lines, "needing 1 command:").endswith("0.000 -> 0.500 -> 0.750")
    assert line_starting(lines, "needing 3 commands:").endswith("0.000 -> 0.250 -> 0.500")

    records = [json.loads(x) for x in (warm_run / "metrics.jsonl").read_text().splitlines()]
    last = records[-1]
    reward = line_starting(lines, "final reward")
    assert reward.startswith(f"final reward (step 2): mean {last['reward_mean']:.3f}; ")
    for domain in ("add", "count"):  # each at the last step that sampled it
        sampled = [r for r in records if f"reward/{domain}" in r][-1]
        at = "" if sampled["step"] == last["step"] else f" (step {sampled['step']})"
        assert f"{domain} {sampled[f'reward/{domain}']:.3f}{at}" in reward
    summary = json.loads((warm_run / "summary.json").read_text())
    assert (
        line_starting(lines, "time:")
        == f"time: SFT training {3.0 * SFT_STEPS:.0f} s, RL wall time {summary['wall_s']:.0f} s"
    )
    checkpoints = line_starting(lines, "checkpoints:")
    assert str(warm_run / "checkpoints" / "step-2") in checkpoints and str(warm_run / "sft" / "model") in checkpoints


def test_a_run_without_a_warm_start_shows_before_and_after(sink_run):
    shown = runs_show(sink_run)
    assert shown.returncode == 0, shown.stderr
    lines = shown.stdout.splitlines()
    summary = json.loads((sink_run / "summary.json").read_text())
    assert line_starting(lines, "stages:") == "stages: RL 2/2 steps"
    assert "held-out pass@1 (before -> after)" in lines
    overall = line_starting(lines, "overall, n=")
    before, after = summary["eval_before"]["overall"], summary["eval_after"]["overall"]
    assert f"{before:.3f} [" in overall and f"-> {after:.3f} [" in overall and "after - before" in overall
    for domain in ("add", "count"):
        assert line_starting(lines, f"{domain}, n=4:")


def test_a_bad_path_is_one_error_line(tmp_path):
    missing = runs_show(tmp_path / "typo")
    assert missing.returncode == 2
    assert missing.stderr.strip().splitlines() == [f"error: {tmp_path / 'typo'}: no such run directory"]
    (tmp_path / "notes").mkdir()
    other = runs_show(tmp_path / "notes")
    assert other.returncode == 2 and len(other.stderr.strip().splitlines()) == 1
    assert "not a training run directory" in other.stderr
