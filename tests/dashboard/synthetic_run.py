"""A run directory the size the issue names (1,000 steps, 100,000 samples), written with the
real TrajectoryStore; the values are made up, the files are the real ones. metrics.jsonl is
written in one go (the real sink fsyncs each record: 1,000 fsyncs would be most of the time)."""

import json
import random
from pathlib import Path

from posttrain.observe.trajectory_store import TrajectoryStore

DOMAINS = ("add", "count", "terminal")


def write_synthetic_run(root: Path, steps: int = 1000, samples_per_step: int = 100, tokens: int = 48) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    (root / "config.toml").write_text(f'[model]\nname = "tiny-llama"\n\n[train]\nsteps = {steps}\n')
    rng = random.Random(0)
    store = TrajectoryStore(root / "trajectories.sqlite")
    records = []
    prompt = list(range(1, 65))
    for step in range(1, steps + 1):
        rows = []
        for index in range(samples_per_step):
            length = rng.randint(1, tokens)
            reward = float(rng.random() < 0.3)
            rows.append(
                {
                    "task_id": f"{DOMAINS[index % 3]}/{index // 2}",
                    "domain": DOMAINS[index % 3],
                    "sample_index": index % 2,
                    "policy_version": step - 1,
                    "prompt_token_ids": prompt,
                    "completion_token_ids": [rng.randrange(49152) for _ in range(length)],
                    "logprobs": [round(-rng.random() * 5, 4) for _ in range(length)],
                    "text": "x" * length,
                    "finish_reason": "stop",
                    "reward": reward,
                    "passed": reward > 0,
                    "details": {"expected": "1"},
                    "advantage": reward - 0.3,
                }
            )
        store.add_groups(step, "train", rows)
        records.append({"step": step, "loss": rng.random(), "reward_mean": 0.3, "kl": 0.01 * step})
    store.close()
    (root / "metrics.jsonl").write_text("".join(json.dumps(r, sort_keys=True) + "\n" for r in records))
    return root
