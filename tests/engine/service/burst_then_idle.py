"""A rollout job whose environment holds it 1 s during a burst, then not at all: a burst of
long-running work, then a queue that empties faster than the trainer steps.

The burst lasts BURST_STEPS steps and, past them, until the grown replica (slot 1) has served a
rollout, up to MAX_BURST_STEPS: how long Ray takes to start that replica under load (8 s alone
on a 2-core machine, far more beside other tests) must not decide whether any burst is left for
it to serve. The step of the first rollout it served goes to the file `served`, which also
ends the burst. (Module-level: Ray workers import it.)"""

import os
from pathlib import Path

from posttrain.pipeline.bench import wait_as_environment
from posttrain.pipeline.rollout_job import run_rollout_job

BURST_STEPS = 6
MAX_BURST_STEPS = 12
HOLD_S = 1.0


def burst_then_idle(job, ctx, served: str):
    step = int(job.stream.key.split(":")[0])
    group = run_rollout_job(job, ctx)
    marker = Path(served)
    if group.served_by.startswith("1@") and not marker.exists():
        partial = marker.with_name(f"{marker.name}.{os.getpid()}")
        partial.write_text(str(step))
        partial.replace(marker)
    in_burst = step <= BURST_STEPS or (step <= MAX_BURST_STEPS and not marker.exists())
    wait_as_environment(ctx, HOLD_S if in_burst else 0.0)
    return group


def burst_end(served: Path) -> int:
    """The last step the burst can have held: rollouts of the two steps admitted ahead of the
    one the grown replica first served may have started holding before it did."""
    first_served = int(served.read_text()) if served.is_file() else MAX_BURST_STEPS
    return min(max(BURST_STEPS, first_served + 2), MAX_BURST_STEPS)
