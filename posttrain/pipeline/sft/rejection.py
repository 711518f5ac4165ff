"""Rejection sampling (expert iteration): the policy's own episodes, kept when the verifier
passes them. The accepted episodes are transcripts for the next round of supervised training."""

from __future__ import annotations

from dataclasses import dataclass

from posttrain.agent.loop import AgentConfig, run_episodes
from posttrain.agent.policies import ModelPolicy
from posttrain.engine.interface import SamplingParams
from posttrain.pipeline.sft.transcripts import Transcript, transcript_of
from posttrain.tasks.records import Task


@dataclass
class RejectionRound:
    accepted: list[Transcript]
    episodes: int
    tasks_solved: int

    @property
    def pass_rate(self) -> float:
        return len(self.accepted) / max(self.episodes, 1)


def rejection_sample(
    engine,
    tokenizer,
    tasks: list[Task],
    samples: int,
    temperature: float,
    agent: AgentConfig,
    seed: int,
    on_episode_end=None,
    max_live: int = 64,
) -> RejectionRound:
    """`samples` episodes of each task at `temperature`; every passed one is accepted."""
    policy = ModelPolicy(engine, tokenizer, SamplingParams(temperature=temperature, max_tokens=agent.reply_tokens))
    episodes = [task for task in tasks for _ in range(samples)]
    seeds = [seed * 1_000_003 + i for i in range(len(episodes))]
    trajectories = run_episodes(
        episodes, policy, tokenizer, agent, on_episode_end=on_episode_end, seeds=seeds, max_live=max_live
    )
    accepted = [
        transcript_of(task, t, "rejection")
        for task, t in zip(episodes, trajectories)
        if t.reward is not None and t.reward.passed
    ]
    solved = {a.task_id for a in accepted}
    return RejectionRound(accepted, len(episodes), len(solved))


def answer_rejection_sample(
    engine, tokenizer, tasks: list[Task], samples: int, temperature: float, max_tokens: int, system_prompt, seed: int
) -> RejectionRound:
    """Single-reply tasks: `samples` replies per task at `temperature`; every passed one is accepted."""
    from posttrain.pipeline.rollout import generate_groups, prompt_token_ids

    if not tasks:
        return RejectionRound([], 0, 0)
    params = SamplingParams(n=samples, temperature=temperature, max_tokens=max_tokens)
    groups = generate_groups(engine, tokenizer, tasks, params, system_prompt, seed_for_slot=lambda slot: seed + slot)
    accepted = []
    for group in groups:
        prompt = prompt_token_ids(tokenizer, group.task, system_prompt)
        for completion, reward in zip(group.completions, group.rewards):
            if reward.passed:
                ids = list(completion.token_ids)
                segment = {"prompt_ids": prompt, "completion_ids": ids, "completion_mask": [1] * len(ids)}
                meta = group.task.metadata
                accepted.append(
                    Transcript(group.task.id, "rejection", [segment], meta.get("family"), meta.get("difficulty"))
                )
    return RejectionRound(accepted, len(tasks) * samples, len({t.task_id for t in accepted}))
