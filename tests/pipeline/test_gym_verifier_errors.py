"""A training run whose reasoning-gym scorer fails: each failed sample scores 0 with its error,
the step's record counts them per domain, the console names the domain once, the episodes are
not masked as infrastructure failures, and the run finishes."""

import json

from posttrain.pipeline.driver import train
from posttrain.tasks.custom_rewards import WORKER
from tests.conftest import write_tiny_config

DOMAINS = """
[[domains]]
name = "plain"
source = "jsonl:plain.jsonl"
heldout = 1
verifier = "exact"

[[domains]]
name = "coins"
source = "reasoning-gym:coin_flip"
heldout = 1
size = 32
reward_timeout_s = 0.001
"""


def test_a_failing_gym_scorer_is_counted_per_domain_and_the_run_goes_on(tmp_path, capfd):
    (tmp_path / "plain.jsonl").write_text("".join(f'{{"prompt": "say {i}", "answer": "{i}"}}\n' for i in range(8)))
    tiny = write_tiny_config(tmp_path, steps=2, checkpoint_every=2).read_text()
    (tmp_path / "run.toml").write_text(tiny[: tiny.index("[[domains]]")] + DOMAINS + tiny[tiny.index("[rollout]") :])
    WORKER.close()  # each call starts a worker that cannot import reasoning-gym within 1 ms
    out = tmp_path / "run"
    train(tmp_path / "run.toml", out)
    records = [json.loads(line) for line in (out / "metrics.jsonl").read_text().splitlines()]
    assert [r["step"] for r in records] == [1, 2]
    for record in records:
        coins = 2 * sum(t.startswith("coins/") for t in record["task_ids"])
        assert record.get("reward_errors/coins", 0.0) == coins and record["reward_errors"] == coins
        assert "reward_errors/plain" not in record and "episodes_masked" not in record
    assert any(r.get("reward_errors/coins") for r in records)
    printed = capfd.readouterr()
    lines = [line for line in (printed.out + printed.err).splitlines() if "its verifier failed" in line]
    assert len(lines) == 1 and "domain 'coins'" in lines[0] and "reasoning-gym:coin_flip: timed out" in lines[0]
