"""Demonstrations: each task's reference steps replayed through the agent loop (one bash call a
turn, then finish) in a real sandbox, and kept only when the task's verifier passes them."""

from __future__ import annotations

import shlex

from posttrain.agent.loop import AgentConfig, run_episodes
from posttrain.agent.policies import DemonstrationPolicy, reference_steps
from posttrain.errors import PosttrainError
from posttrain.pipeline.sft.transcripts import Transcript, transcript_of
from posttrain.tasks.records import Task


class DemonstrationFailed(PosttrainError):
    """A task's reference steps did not pass its own verifier: the task or its steps are wrong."""


def look_act_check(steps: list[str], root: str) -> list[str]:
    """The steps with a listing of `root` before them and a long listing (sizes, modes) after,
    unless they already begin with a listing (the composite family's own look-act-check)."""
    if steps and steps[0].startswith("ls "):
        return list(steps)
    quoted = shlex.quote(root)
    return [f"ls -R {quoted}", *steps, f"ls -lR {quoted}"]


def styled(tasks: list[Task], style: str) -> list[Task]:
    """`[sft] demonstration_style` applied: copies of the tasks whose reference steps look
    first and check after; the tasks themselves are left as they are."""
    if style == "reference":
        return tasks
    out = []
    for task in tasks:
        steps = reference_steps(task)
        root = task.metadata.get("root", "/app")
        metadata = {**task.metadata, "reference_steps": look_act_check(list(steps), root)}
        out.append(task.model_copy(update={"metadata": metadata}))
    return out


def collect_demonstrations(
    tasks: list[Task], tokenizer, agent: AgentConfig, on_episode_end=None, max_live: int = 32, style: str = "reference"
) -> list[Transcript]:
    """One verified demonstration per task, its steps in `style` (see `styled`). Raises
    DemonstrationFailed naming the first task whose demonstration failed (a warm start on
    unverified transcripts would teach wrong moves)."""
    tasks = styled(tasks, style)
    # The steps are the whole solution: the step budget must not cut a demonstration short.
    longest = max((len(t.metadata.get("reference_steps") or ()) for t in tasks), default=0)
    agent = agent.model_copy(update={"max_steps": max(agent.max_steps, longest + 1), "scratch_notes": False})
    trajectories = run_episodes(
        tasks, DemonstrationPolicy(tokenizer), tokenizer, agent, on_episode_end=on_episode_end, max_live=max_live
    )
    # A replay that failed once runs again before it counts against its task: a sandbox or a
    # verifier killed from outside fails a correct reference, and one such loss must not stop a
    # warm start of hundreds of demonstrations. A wrong reference fails twice.
    again = [i for i, t in enumerate(trajectories) if not (t.reward and t.reward.passed)]
    if again:
        retried = run_episodes(
            [tasks[i] for i in again], DemonstrationPolicy(tokenizer), tokenizer, agent, max_live=max_live
        )
        for index, trajectory in zip(again, retried):
            trajectories[index] = trajectory
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


def answer_demonstrations(tasks: list[Task], tokenizer, system_prompt: str | None) -> list[Transcript]:
    """Single-reply tasks (the scene domain, JSONL answers): the prompt exactly as a rollout sends
    it, then the reference answer and the end-of-turn token. Raises DemonstrationFailed naming the
    first task whose reference answer its own verifier does not pass."""
    from posttrain.pipeline.rollout import prompt_token_ids
    from posttrain.tasks.verifiers import score

    transcripts = []
    for task in tasks:
        reference = "" if task.answer is None else str(task.answer)
        if not score(reference, task).passed:
            raise DemonstrationFailed(
                f"task {task.id}: its reference answer does not pass its own verifier ({task.verifier}); "
                "a warm start needs answers written the way the verifier reads them"
            )
        completion = list(tokenizer(reference, add_special_tokens=False)["input_ids"]) + [tokenizer.eos_token_id]
        segment = {
            "prompt_ids": prompt_token_ids(tokenizer, task, system_prompt),
            "completion_ids": completion,
            "completion_mask": [1] * len(completion),
        }
        transcripts.append(
            Transcript(
                task.id, "demonstration", [segment], task.metadata.get("family"), task.metadata.get("difficulty")
            )
        )
    return transcripts
