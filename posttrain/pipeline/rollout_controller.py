"""What to generate and when: the data stream, admission under the staleness bound, the
experience buffer, regeneration of stale groups, and the state a lossless resume needs.

The data stream is the mixture's: step s draws `prompts_per_step` tasks (`sample_step(s)`), one
rollout job per task ("stream slot" s:i). Admission keeps rollouts at most eta policy versions
ahead of the trainer (AReaL): while the trainer holds version v, the slots of steps up to
v + 1 + eta may be generating, and never those past the run's last step. So every slot is
generated, and trained exactly once, whatever the timing: eta = 0 is the synchronous loop
(step s+1 is drawn only after step s's update), eta >= 1 overlaps generation with training.

The trainer takes the oldest `prompts_per_step` fresh groups from the buffer (not necessarily
one step's: a long episode does not hold up the others). A group that went stale waiting (gap
> eta) is regenerated with high priority, preempting newer work if every worker is busy.
"""

from __future__ import annotations

import queue
import threading
import time
from dataclasses import dataclass

from posttrain.dispatch import Executor, Job, JobResult
from posttrain.engine.interface import SamplingParams
from posttrain.engine.service.replicas import ReplicaClient
from posttrain.engine.service.transport import EngineClient
from posttrain.errors import PosttrainError
from posttrain.pipeline.experience_buffer import BufferedGroup, StalenessBuffer
from posttrain.pipeline.rollout import sample_seed
from posttrain.pipeline.rollout_job import RolloutJob, StreamSlot
from posttrain.pipeline.shutdown_notice import RunPreempted
from posttrain.tasks.domains import DomainMixture
from posttrain.tasks.records import Task

PRIORITY_NEW = 0
PRIORITY_OVERDUE = 1  # regenerations and work re-queued on resume: the trainer waits for them


@dataclass
class ControllerCounters:
    regenerated: int = 0  # stale groups generated again
    requeued_on_resume: int = 0  # slots in flight at the checkpoint, generated again on resume
    restored_buffered: int = 0  # finished groups that came back from the checkpoint
    jobs_failed: int = 0

    def to_dict(self) -> dict[str, int]:
        return dict(vars(self))


@dataclass
class RolloutPlan:
    """How each job samples: fixed for the run."""

    params: SamplingParams
    run_seed: int
    prompts_per_step: int
    tokenizer: str
    system_prompt: str | None
    agent: object = None
    attempts: int = 4  # the dispatcher's max_attempts, which each job's last attempt needs to know


class RolloutController:
    def __init__(
        self,
        plan: RolloutPlan,
        mixture: DomainMixture,
        executor: Executor,
        engine: EngineClient | ReplicaClient,
        max_staleness: int,
        last_step: int,
    ) -> None:
        self.plan = plan
        self.mixture = mixture
        self.executor = executor
        self.engine = engine
        self.max_staleness = max_staleness
        self.last_step = last_step
        self.buffer = StalenessBuffer(max_staleness)
        self.admitted_through = 0
        self.jobs: dict[str, RolloutJob] = {}  # admitted and not yet trained, by stream slot
        self.pending: dict[str, str] = {}  # slot -> id of its job in the dispatcher (in flight)
        self._generations: dict[str, int] = {}
        self.placements: dict[str, str] = {}  # slot -> where its group was generated ("HOST/PID", Ray: "NODE/PID")
        self.engines: dict[str, str] = {}  # slot -> the engine replica that generated it ("SLOT@NODE")
        self._jobs_made = 0
        self.counters = ControllerCounters()
        self.waited_s = 0.0

    # ---- admission -------------------------------------------------------------------------

    def admit(self, trainer_version: int) -> None:
        """Submit the stream's next steps while they are within eta + 1 of the trainer."""
        while self.admitted_through < min(self.last_step, trainer_version + 1 + self.max_staleness):
            step = self.admitted_through + 1
            tasks = self.mixture.sample_step(step, self.plan.prompts_per_step)
            for stream, task, seed in zip(self._slots(step, len(tasks)), tasks, self._seeds(step, tasks)):
                self._submit(self._job(task, stream, seed), PRIORITY_NEW)
            self.admitted_through = step

    def _slots(self, step: int, n: int) -> list[StreamSlot]:
        return [StreamSlot(step, i) for i in range(n)]

    def _seeds(self, step: int, tasks: list[Task]) -> list[int]:
        """The synchronous loop's seeds: answer tasks by their place among the step's answer
        tasks; terminal tasks after all of the step's tasks."""
        seeds, answer, terminal = [], 0, 0
        for task in tasks:
            if task.kind == "terminal":
                seeds.append(sample_seed(self.plan.run_seed, step, len(tasks) + terminal))
                terminal += 1
            else:
                seeds.append(sample_seed(self.plan.run_seed, step, answer))
                answer += 1
        return seeds

    def _job(self, task: Task, stream: StreamSlot, seed: int) -> RolloutJob:
        return RolloutJob(
            task=task,
            stream=stream,
            params=self.plan.params,
            seed=seed,
            engine=self._next_engine(),
            tokenizer=self.plan.tokenizer,
            system_prompt=self.plan.system_prompt,
            agent=self.plan.agent,
            attempts=self.plan.attempts,
        )

    def _next_engine(self) -> EngineClient | ReplicaClient:
        self._jobs_made += 1
        return self.engine.for_job(self._jobs_made - 1)

    def _submit(self, job: RolloutJob, priority: int) -> None:
        key = job.stream.key
        self.jobs[key] = job
        self._generations[key] = generation = self._generations.get(key, 0) + 1
        self.pending[key] = job_id = f"{key}#{generation}"
        self.executor.submit(Job(job_id, job, domain=job.task.domain, priority=priority))

    # ---- the trainer's side ----------------------------------------------------------------

    def next_batch(self, trainer_version: int, interrupt: threading.Event | None = None) -> list[BufferedGroup]:
        """Block until `prompts_per_step` fresh groups are ready for the update of
        `trainer_version`; regenerate stale ones meanwhile. `interrupt` set (a preemption
        notice) ends the wait with RunPreempted, nothing taken from the buffer."""
        started = time.perf_counter()
        try:
            while True:
                if interrupt is not None and interrupt.is_set():
                    raise RunPreempted(f"the wait for the update of version {trainer_version} was interrupted")
                self.collect(block=False)
                batch, stale = self.buffer.take(self.plan.prompts_per_step, trainer_version)
                for entry in stale:
                    self.counters.regenerated += 1
                    self._submit(self.jobs[entry.key], PRIORITY_OVERDUE)
                if batch:
                    for entry in batch:
                        del self.jobs[entry.key]
                    return batch
                if not self.pending and len(self.buffer) < self.plan.prompts_per_step:
                    raise PosttrainError(
                        f"the data stream ran dry at version {trainer_version}: nothing pending, "
                        f"{len(self.buffer)} groups buffered (admitted through step {self.admitted_through})"
                    )
                self.collect(block=True)
        finally:
            self.waited_s += time.perf_counter() - started

    def collect(self, block: bool) -> None:
        """Move finished rollouts from the dispatcher into the buffer (waiting up to 0.5 s for
        one if `block`)."""
        if block:
            self.executor.check()
        try:
            result = self.executor.results.get(timeout=0.5) if block else self.executor.results.get_nowait()
        except queue.Empty:
            return
        while True:
            self._on_result(result)
            try:
                result = self.executor.results.get_nowait()
            except queue.Empty:
                return

    def drain(self, until: float) -> None:
        """Collect rollouts in flight into the buffer until none is left or time.monotonic()
        reaches `until`; admits nothing new. Those still in flight (or failed) stay pending:
        state_dict() records them to be generated again on resume."""
        while self.pending and time.monotonic() < until:
            try:
                self.collect(block=True)
            except PosttrainError:
                return  # a slot that failed for good stays pending, to be redone

    def _on_result(self, result: JobResult) -> None:
        job: RolloutJob = result.job.payload
        key = job.stream.key
        if self.pending.get(key) != result.job.id:
            return  # not the slot's current job (cannot happen today; kept as a guard)
        if not result.ok:
            self.counters.jobs_failed += 1
            raise PosttrainError(
                f"rollout of task {job.task.id} (stream slot {key}) failed {result.job.attempts} times; "
                f"last error: {result.error}. The run can be resumed with --resume once the cause is fixed."
            )
        del self.pending[key]
        self.placements[key] = result.where
        if getattr(result.value, "served_by", ""):
            self.engines[key] = result.value.served_by
        self.buffer.put(key, (job.stream.step, job.stream.slot), result.value)

    # ---- state for a lossless resume ---------------------------------------------------------

    def state_dict(self) -> dict:
        """Everything admitted and not yet trained: finished groups (kept whole) and the slots
        in flight (re-queued on resume), plus the admission point. Saved with each checkpoint."""
        slots = [
            {
                "stream": key,
                "task": job.task.model_dump(mode="json"),
                "seed": job.seed,
                "in_flight": key in self.pending,
            }
            for key, job in sorted(self.jobs.items(), key=lambda kv: _order(kv[0]))
        ]
        return {
            "admitted_through": self.admitted_through,
            "slots": slots,
            "buffer": self.buffer.state(),
            "counters": self.counters.to_dict(),
        }

    def load_state_dict(self, state: dict) -> None:
        self.admitted_through = state["admitted_through"]
        self.buffer.restore(state["buffer"])
        for key, value in state["counters"].items():
            setattr(self.counters, key, value)
        self.counters.restored_buffered += len(state["buffer"])
        for item in state["slots"]:
            job = self._job(Task.model_validate(item["task"]), StreamSlot.parse(item["stream"]), item["seed"])
            self.jobs[job.stream.key] = job
            if item["in_flight"]:
                self.counters.requeued_on_resume += 1
                self._submit(job, PRIORITY_OVERDUE)

    @property
    def in_flight(self) -> int:
        return len(self.pending)


def _order(key: str) -> tuple[int, int]:
    stream = StreamSlot.parse(key)
    return stream.step, stream.slot
