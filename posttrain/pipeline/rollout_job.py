"""One rollout job: a task's whole group (n samples of a reply, or n agent episodes), run by a
rollout worker (a thread, a process or a Ray actor) against the engine service, scored by the
task's verifier. What comes back is the group, ready for advantages.

The function is module-level so that process and Ray workers can import it; the tokenizer is
loaded once per worker.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from functools import lru_cache

from posttrain.agent.loop import AgentConfig
from posttrain.dispatch.job import JobContext, Preempted
from posttrain.engine.interface import SamplingParams
from posttrain.engine.service.replicas import ReplicaClient
from posttrain.engine.service.transport import EngineClient
from posttrain.faults import fault_point
from posttrain.pipeline.rollout import generate_groups
from posttrain.pipeline.terminal_rollout import run_terminal_groups
from posttrain.tasks.records import Task


class InfraFailed(RuntimeError):
    """An episode measured the infrastructure, not the policy (its sandbox died or never started,
    the engine failed under it, its verifier could not run or was killed from outside): the
    group is not a fair sample, so the job fails and the dispatcher runs it again, while
    attempts are left."""


@dataclass(frozen=True)
class StreamSlot:
    """Where a task sits in the run's data stream: the step that drew it and its place there.
    Every slot is trained exactly once over a run, in sync and async mode alike."""

    step: int
    slot: int

    @property
    def key(self) -> str:
        return f"{self.step}:{self.slot}"

    @classmethod
    def parse(cls, key: str) -> StreamSlot:
        step, slot = key.split(":")
        return cls(int(step), int(slot))


@dataclass
class RolloutJob:
    task: Task
    stream: StreamSlot
    params: SamplingParams  # n = group size
    seed: int
    engine: EngineClient | ReplicaClient
    tokenizer: str  # model spec the tokenizer comes from
    system_prompt: str | None = None
    agent: AgentConfig | None = None
    attempts: int = 4  # the dispatcher's max_attempts: the last one keeps what it got


def raise_if_infra_failed(group, attempt: int, attempts: int) -> None:
    """Fail the job (the dispatcher runs the whole group again, elsewhere) when an episode
    measured the infrastructure, unless this is the last attempt: then the group comes back
    and those episodes are left out of its statistics (step_scoring)."""
    failed = [t for t in group.trajectories if t.infra_failed]
    if failed and attempt < attempts:
        raise InfraFailed(
            f"task {group.task.id}: {failed[0].failure_mode} in {len(failed)} of {len(group.trajectories)} "
            f"episodes ({(failed[0].error or 'no detail')[:300]}); attempt {attempt} of {attempts}"
        )


@lru_cache(maxsize=4)
def _tokenizer(spec: str):
    from posttrain.models.loading import load_tokenizer

    return load_tokenizer(spec)


def run_rollout_job(job: RolloutJob, ctx: JobContext):
    """-> RolloutGroup (answer task) or EpisodeGroup (terminal task)."""
    tokenizer = _tokenizer(job.tokenizer)
    engine = job.engine.with_cancel(ctx.cancelled, Preempted)
    if job.task.kind == "terminal":
        agent = job.agent or AgentConfig()
        params = replace(job.params, n=1, max_tokens=agent.reply_tokens, seed=None)
        (group,) = run_terminal_groups(engine, tokenizer, [job.task], job.params.n, params, agent, seed=job.seed)
        raise_if_infra_failed(group, ctx.attempt, job.attempts)
    else:
        (group,) = generate_groups(
            engine, tokenizer, [job.task], job.params, job.system_prompt, seed_for_slot=lambda _: job.seed
        )
    group.served_by = getattr(engine, "served_by", "")
    fault_point("rollout_job")
    return group
