"""What the driver does on a preemption notice (SIGTERM), at a step boundary: the trainer holds
the policy of step `trained` and nothing of the next step is taken yet.

1. Rollouts in flight get the first half of the grace to finish into the buffer (nothing new
   is admitted); those still running are recorded by their stream slot, task and seed, and a
   resume generates them again, once.
2. The state is saved: a full checkpoint of step `trained` when there is none yet (model,
   optimizer, data cursor, mixture and curriculum, pipeline state), else a newer pipeline state
   added to that checkpoint (the trainer, the data cursor and the curriculum have not moved
   since it was written: they move only when a step trains). Then it is published, manifest last.
"""

from __future__ import annotations

from collections.abc import Callable

from posttrain.pipeline.rollout_source import RolloutSource
from posttrain.pipeline.run_dir import RunDir
from posttrain.pipeline.run_mirror import RunMirror
from posttrain.pipeline.shutdown_notice import ShutdownNotice
from posttrain.train.checkpoint import save_pipeline_state


def save_on_notice(
    notice: ShutdownNotice,
    rollouts: RolloutSource,
    trained: int,
    rd: RunDir,
    checkpoint: Callable[[int], None],
    mirror: RunMirror | None,
    keep: int,
) -> str:
    """Drain, save and publish; returns what was saved, in words."""
    rollouts.drain(notice.deadline(0.5))
    step_dir = rd.checkpoints / f"step-{trained}"
    state = rollouts.state_dict()
    if not (step_dir / "state.json").is_file():
        checkpoint(trained)
    elif state is not None:
        file = save_pipeline_state(step_dir, state)
        if mirror is not None:
            mirror.publish_checkpoint_file(step_dir, file, keep)
    notice.saved = True
    slots = (state or {}).get("controller", {}).get("slots", [])
    in_flight = sum(slot["in_flight"] for slot in slots)
    where = f"{step_dir}" + (f" and {mirror.store.url}" if mirror is not None else "")
    return (
        f"preempted: the state at step {trained} ({len(slots) - in_flight} finished groups not yet trained, "
        f"{in_flight} rollouts in flight to redo) saved to {where} in {notice.elapsed_s():.1f} s"
    )
