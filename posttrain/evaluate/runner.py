"""An evaluation run: every task attempted K times by one agent, verified, and reported.

    RUN_DIR/
      eval.json              what was asked (tasks, agent, model, attempts, seed): a resume must match
      trajectories/          one JSON per attempt: the full trajectory
      results.jsonl          one row per finished attempt, appended and fsynced after its trajectory
      summary.json           outcomes (pass@k, failure modes, tool-call accuracy, tokens, cost)
      performance.json       wall time per phase and prefix-cache hits
      report.md, report.html

A row in results.jsonl is the commit point of an attempt: a resumed run skips the attempts that
have one and redoes the rest; duplicate rows (none are written, but a copy-pasted file might
have them) count once. Attempts are seeded by (seed, task, attempt), so a resumed run produces
what an uninterrupted one would.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import threading
import time
from dataclasses import replace
from pathlib import Path

from posttrain.agent.loop import AgentConfig, run_episodes
from posttrain.agent.policies import Policy
from posttrain.agent.trajectory import Trajectory, TurnRecord
from posttrain.engine.interface import GenerationRequest, SamplingParams
from posttrain.errors import PosttrainError
from posttrain.evaluate.metrics import attempt_row, performance, summarize
from posttrain.evaluate.report import write_reports
from posttrain.models.token_ids import chat_prompt_ids
from posttrain.storage.atomic import write_json_atomic
from posttrain.tasks.records import Reward, Task
from posttrain.tasks.verifiers import score


class EvalRunError(PosttrainError):
    pass


def attempt_seed(seed: int, task_id: str, attempt: int) -> int:
    return int.from_bytes(hashlib.sha256(f"{seed}:{task_id}:{attempt}".encode()).digest()[:6], "little")


def _safe(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", name)


class ResultsLog:
    def __init__(self, out: Path) -> None:
        self.out = out
        self.path = out / "results.jsonl"
        (out / "trajectories").mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        self._drop_partial_line()

    def _drop_partial_line(self) -> None:
        """A kill in the middle of an append leaves a line without its newline: cut it off,
        so the next append starts a line of its own (that attempt is redone)."""
        if not self.path.is_file():
            return
        data = self.path.read_bytes()
        if data and not data.endswith(b"\n"):
            with open(self.path, "r+b") as handle:
                handle.truncate(data.rfind(b"\n") + 1)

    def rows(self) -> list[dict]:
        if not self.path.is_file():
            return []
        rows, seen = [], set()
        lines = self.path.read_text().splitlines()
        for number, line in enumerate(lines, start=1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
            except json.JSONDecodeError:
                if number == len(lines):
                    continue  # a line cut by a kill mid-write: that attempt is redone
                raise EvalRunError(f"{self.path}:{number}: not JSON; the file is damaged") from None
            key = (row["task_id"], row["attempt"])
            if key not in seen:
                seen.add(key)
                rows.append(row)
        return rows

    def add(self, task: Task, attempt: int, trajectory: Trajectory, prices: dict[str, float]) -> dict:
        name = f"trajectories/{_safe(task.id)}__{attempt}.json"
        target = self.out / name
        write_json_atomic(target, trajectory.to_dict(), indent=None, sort_keys=False)
        category = str(task.metadata.get("category") or task.domain)
        row = attempt_row(task.id, attempt, category, trajectory, name, prices)
        with self._lock, open(self.path, "a") as handle:
            handle.write(json.dumps(row) + "\n")
            handle.flush()
            os.fsync(handle.fileno())
        return row


def run_eval(
    tasks: list[Task],
    agent: str,
    policy: Policy,
    tokenizer,
    out: Path,
    *,
    attempts: int = 1,
    concurrency: int = 4,
    seed: int = 0,
    model: str = "",
    engine=None,
    params: SamplingParams | None = None,
    agent_config: AgentConfig | None = None,
    prices: dict[str, float] | None = None,
    ks: list[int] | None = None,
    on_attempt=None,
    tasks_spec: str = "",
    max_context_tokens: int | None = None,
    backend: str | None = None,
    invalid: list | None = None,
    say=None,
    system_prompt: str | None = None,
) -> dict:
    """Run (or resume) an eval into `out`; returns the summary. `invalid`: task directories that
    did not load (posttrain.tasks.harbor.InvalidTask), reported in the summary and not run.
    `say`: a function that takes a line (here: that the run resumes, and how far it got).
    `system_prompt`: the agent's system message (default: built from agent_config's tools)."""
    prices = prices or {}
    out.mkdir(parents=True, exist_ok=True)
    settings = {
        "tasks": tasks_spec,
        "task_ids": [t.id for t in tasks],
        "agent": agent,
        "model": model,
        "attempts": attempts,
        "seed": seed,
    }
    settings_path = out / "eval.json"
    if settings_path.is_file():
        previous = json.loads(settings_path.read_text())
        differing = [k for k in settings if previous.get(k) != settings[k]]
        if differing:
            raise EvalRunError(
                f"{out} holds an eval run with other settings ({', '.join(differing)}); use another --out"
            )
    else:
        settings_path.write_text(json.dumps(settings, indent=2) + "\n")
    log = ResultsLog(out)
    finished = log.rows()
    done = {(r["task_id"], r["attempt"]) for r in finished}
    pending = [(task, attempt) for task in tasks for attempt in range(attempts) if (task.id, attempt) not in done]
    total = len(tasks) * attempts
    if say and len(pending) < total:
        say(f"resuming: {total - len(pending)}/{total} attempts done in {out}; running the other {len(pending)}")
    if on_attempt:
        for row in finished:
            on_attempt(row, resumed=True)

    def record(task: Task, attempt: int, trajectory: Trajectory) -> None:
        row = log.add(task, attempt, trajectory, prices)
        if on_attempt:
            on_attempt(row, resumed=False)

    terminal = [(t, a) for t, a in pending if t.kind == "terminal"]
    answer = [(t, a) for t, a in pending if t.kind != "terminal"]
    if terminal:

        def ended(trajectory: Trajectory) -> None:
            task, attempt = terminal[trajectory.metadata["index"]]
            record(task, attempt, trajectory)

        run_episodes(
            [t for t, _ in terminal],
            policy,
            tokenizer,
            agent_config,
            backend=backend,
            on_episode_end=ended,
            seeds=[attempt_seed(seed, t.id, a) for t, a in terminal],
            max_live=concurrency,
            system=system_prompt,
        )
    if answer:
        _answer_attempts(answer, agent, engine, tokenizer, params, seed, concurrency, record, max_context_tokens)
    rows = log.rows()
    summary = summarize(rows, ks)
    summary.update(agent=agent, model=model, task_source=tasks_spec, attempts=attempts, seed=seed)
    summary["invalid"] = len(invalid or [])
    summary["invalid_tasks"] = [{"task": item.name, "reason": item.reason} for item in invalid or []]
    write_json_atomic(out / "summary.json", summary, sort_keys=False)
    perf = performance(rows)
    write_json_atomic(out / "performance.json", perf, sort_keys=False)
    write_reports(out, summary, perf, rows)
    return summary


def _answer_attempts(
    items: list[tuple[Task, int]],
    agent: str,
    engine,
    tokenizer,
    params: SamplingParams | None,
    seed: int,
    batch: int,
    record,
    max_context_tokens: int | None,
) -> None:
    """Single-reply tasks (the long-context suite): the oracle answers with the reference, nop
    with nothing, a model with one reply per attempt."""
    for start in range(0, len(items), max(1, batch)):
        chunk = items[start : start + max(1, batch)]
        started = time.perf_counter()
        replies: list[tuple[str, list[int], list[int], list[float], str | None]] = []
        if agent == "model":
            prompts = [chat_prompt_ids(tokenizer, task.messages()) for task, _ in chunk]
            requests, index = [], []
            for i, ((task, attempt), prompt) in enumerate(zip(chunk, prompts)):
                if max_context_tokens and len(prompt) + (params.max_tokens if params else 0) > max_context_tokens:
                    continue
                request_params = replace(params or SamplingParams(), seed=attempt_seed(seed, task.id, attempt), n=1)
                requests.append(GenerationRequest(f"{task.id}:{attempt}", prompt, request_params, task.messages()))
                index.append(i)
            completions = dict(zip(index, engine.generate(requests))) if requests else {}
            for i, prompt in enumerate(prompts):
                c = completions.get(i)
                if c is None:
                    replies.append(("", prompt, [], [], "context_overflow"))
                else:
                    replies.append((c.text, prompt, list(c.token_ids), list(c.logprobs), None))
        else:
            for task, _ in chunk:
                text = str(task.answer) if agent == "oracle" else ""
                replies.append((text, [], [], [], None))
        elapsed = (time.perf_counter() - started) / len(chunk)
        for (task, attempt), (text, prompt, ids, logprobs, failure) in zip(chunk, replies):
            trajectory = Trajectory(task.id, agent)
            trajectory.turns.append(TurnRecord(0, prompt, ids, logprobs, [], text, generate_s=elapsed))
            trajectory.duration_s = elapsed
            if failure:
                trajectory.reward = Reward(value=0.0, passed=False, details={"error": "the prompt does not fit"})
                trajectory.failure_mode, trajectory.stop_reason = failure, "error"
            else:
                trajectory.reward = score(text, task)
                trajectory.stop_reason = "finish"
                if not trajectory.reward.passed:
                    trajectory.failure_mode = "wrong_answer"
            record(task, attempt, trajectory)
