"""The dispatcher: a work queue of jobs with priorities and domain weights, preemption, retries
with backoff, and an elastic pool of workers (threads, processes or Ray actors) that survives
workers dying. It knows nothing of RL: a job is a payload and a module-level function.

    queue = WorkQueue(weights={"math": 2.0, "code": 1.0})
    executor = Executor(ProcessWorkerFactory(run_job), workers=4, retry=RetryPolicy(max_attempts=3))
    executor.submit(Job("t1", payload, domain="math"))
    result = executor.results.get()
"""

from posttrain.dispatch.executor import Executor, ExecutorStats
from posttrain.dispatch.job import Job, JobContext, JobResult, Preempted
from posttrain.dispatch.preemption import RunningJob, choose_victim
from posttrain.dispatch.retry import RetryPolicy
from posttrain.dispatch.work_queue import WorkQueue, next_domain

__all__ = [
    "Executor",
    "ExecutorStats",
    "Job",
    "JobContext",
    "JobResult",
    "Preempted",
    "RetryPolicy",
    "RunningJob",
    "WorkQueue",
    "choose_victim",
    "next_domain",
]
