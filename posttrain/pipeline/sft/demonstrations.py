"""Demonstrations: each task's reference steps replayed through the agent loop (one bash call a
turn, then finish) in a real sandbox, and kept only when the task's verifier passes them."""

from __future__ import annotations

from posttrain.agent.loop import AgentConfig, run_episodes
from posttrain.agent.policies import DemonstrationPolicy
from posttrain.errors import PosttrainError
from posttrain.pipeline.sft.transcripts import Transcript, transcript_of
from posttrain.tasks.records import Task


class DemonstrationFailed(PosttrainError):
    """A task's reference steps did not pass its own verifier: the task or its steps are wrong."""


def collect_demonstrations(
    tasks: list[Task], tokenizer, agent: AgentConfig, on_episode_end=None, max_live: int = 32
) -> list[Transcript]:
    """One verified demonstration per task. Raises DemonstrationFailed naming the first task
    whose demonstration failed (a warm start on unverified transcripts would teach wrong moves)."""
    # The steps are the whole solution: the step budget must not cut a demonstration short.
    longest = max((len(t.metadata.get("reference_steps") or ()) for t in tasks), default=0)
    agent = agent.model_copy(update={"max_steps": max(agent.max_steps, longest + 1), "scratch_notes": False})
    trajectories = run_episodes(
        tasks, DemonstrationPolicy(tokenizer), tokenizer, agent, on_episode_end=on_episode_end, max_live=max_live
    )
    transcripts = []
    for task, trajectory in zip(tasks, trajectories):
        if not (trajectory.reward and trajectory.reward.passed):
            why = trajectory.error or (trajectory.reward.details if trajectory.reward else "no reward")
            raise DemonstrationFailed(
                f"task {task.id} ({task.metadata.get('task_dir', 'generated')}): its reference steps failed the "
                f"verifier ({trajectory.failure_mode or 'failed'}: {str(why)[:300]})"
            )
        transcripts.append(transcript_of(task, trajectory, "demonstration"))
    return transcripts
