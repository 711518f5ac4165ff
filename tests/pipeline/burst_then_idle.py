"""A rollout job whose environment holds it 1 s for the first BURST_STEPS steps, then not at
all: a burst of long-running work, then a queue that empties faster than the trainer steps.
(Module-level: Ray workers import it.)"""

from posttrain.pipeline.bench import rollout_with_environment_time

BURST_STEPS = 6


def burst_then_idle(job, ctx):
    step = int(job.stream.key.split(":")[0])
    return rollout_with_environment_time(job, ctx, median_s=1.0 if step <= BURST_STEPS else 0.0, sigma=0.0)
