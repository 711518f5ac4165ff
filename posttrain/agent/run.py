"""Run a policy over terminal tasks and keep every episode: `trajectories.jsonl` (one line per
episode, appended and flushed as each one is verified, so a crash loses nothing finished) and
`summary.json` (pass rate, failure modes, turns, tokens, prefix-cache hit rate)."""

from __future__ import annotations

import json
import os
import threading
from collections import Counter
from pathlib import Path

from posttrain.agent.loop import AgentConfig, run_episodes
from posttrain.agent.policies import Policy
from posttrain.agent.trajectory import Trajectory
from posttrain.tasks.records import Task


class TrajectoryLog:
    """Append-only JSONL of finished episodes, safe to call from several threads."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._lock = threading.Lock()
        path.parent.mkdir(parents=True, exist_ok=True)

    def append(self, trajectory: Trajectory) -> None:
        line = json.dumps(trajectory.to_dict(), default=str)
        with self._lock, open(self.path, "a") as handle:
            handle.write(line + "\n")
            handle.flush()
            os.fsync(handle.fileno())


def summarize(trajectories: list[Trajectory]) -> dict:
    n = len(trajectories)
    passed = sum(1 for t in trajectories if t.reward and t.reward.passed)
    prompt = sum(t.prompt_tokens for t in trajectories)
    cached = sum(c.cached_prompt_tokens for t in trajectories for c in t.turns)
    return {
        "episodes": n,
        "passed": passed,
        "pass_rate": passed / n if n else 0.0,
        "failure_modes": dict(Counter(t.failure_mode for t in trajectories if t.failure_mode)),
        "stop_reasons": dict(Counter(t.stop_reason for t in trajectories)),
        "mean_turns": sum(len(t.turns) for t in trajectories) / n if n else 0.0,
        "tool_calls": sum(len(t.tool_calls) for t in trajectories),
        "tool_errors": dict(Counter(c.error for t in trajectories for c in t.tool_calls if c.error)),
        "prompt_tokens": prompt,
        "completion_tokens": sum(t.completion_tokens for t in trajectories),
        "prefix_hit_rate": cached / prompt if prompt else 0.0,
        "cost": sum(t.cost for t in trajectories),
        "duration_s": sum(t.duration_s for t in trajectories),
        "tasks": {t.task_id: t.summary() for t in trajectories},
    }


def run_suite(tasks: list[Task], policy: Policy, tokenizer, config: AgentConfig | None = None,
              out: Path | None = None, backend: str | None = None, on_episode_end=None) -> dict:
    log = TrajectoryLog(out / "trajectories.jsonl") if out else None

    def ended(trajectory: Trajectory) -> None:
        if log:
            log.append(trajectory)
        if on_episode_end:
            on_episode_end(trajectory)

    trajectories = run_episodes(tasks, policy, tokenizer, config, backend=backend, on_episode_end=ended)
    summary = summarize(trajectories)
    if out:
        tmp = out / "summary.json.tmp"
        tmp.write_text(json.dumps(summary, indent=2) + "\n")
        tmp.replace(out / "summary.json")
    return summary
