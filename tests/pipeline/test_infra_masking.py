"""Episodes that measured the infrastructure (a sandbox that died or never started, a verifier
that could not run) are left out of their group: the step's advantages, training samples and
reward metrics equal those of the same step with those episodes removed."""

import pytest
import torch

from posttrain.agent.trajectory import Trajectory, TurnRecord
from posttrain.config import RunConfig
from posttrain.pipeline.step_scoring import score_step
from posttrain.pipeline.terminal_rollout import EpisodeGroup
from posttrain.tasks.records import Reward, Task


def episode(index: int, reward: float, failure: str | None = None) -> Trajectory:
    trajectory = Trajectory(task_id="t", policy="p", failure_mode=failure)
    trajectory.turns = [TurnRecord(0, [1, 2, 3], [10 + index, 11 + index], [-0.5, -0.25], [0, 0], "")]
    trajectory.reward = Reward(value=reward, passed=reward >= 1.0)
    return trajectory


def group(task_id: str, episodes: list[Trajectory]) -> EpisodeGroup:
    return EpisodeGroup(Task(id=task_id, domain="term", instruction="x", kind="terminal", verifier="harbor"), episodes)


def config(advantage: str, dynamic: bool) -> RunConfig:
    return RunConfig.model_validate(
        {
            "domains": [{"name": "term", "source": "terminal-gen:all", "kind": "terminal"}],
            "algorithm": {"advantage": advantage, "dynamic_sampling": dynamic},
        }
    )


# each group: the rewards of its episodes, and which of them failed for the infrastructure
STEP = [
    ("a", [(1.0, None), (0.0, "sandbox_died"), (0.0, None), (1.0, None), (0.0, None)]),
    ("b", [(0.0, None), (1.0, None), (1.0, "verifier_unavailable"), (0.0, None), (1.0, None)]),
]


def step(without_failures: bool) -> list[EpisodeGroup]:
    groups = []
    for task_id, rows in STEP:
        episodes = [episode(i, r, f) for i, (r, f) in enumerate(rows)]
        groups.append(group(task_id, [e for e in episodes if not (without_failures and e.infra_failed)]))
    return groups


@pytest.mark.parametrize("advantage", ["grpo", "rloo", "reinforce_pp"])
@pytest.mark.parametrize("dynamic", [True, False])
def test_advantages_samples_and_rewards_equal_the_step_without_the_failed_episodes(advantage, dynamic):
    masked_record, masked_samples, masked_advantages = score_step(config(advantage, dynamic), step(False))
    record, samples, advantages = score_step(config(advantage, dynamic), step(True))
    valid = torch.tensor([[f is None for _, f in rows] for _, rows in STEP])
    assert torch.allclose(masked_advantages[valid].reshape(advantages.shape), advantages, atol=1e-6)
    assert torch.equal(masked_advantages[~valid], torch.zeros(2))
    assert [(s.completion_ids, pytest.approx(s.advantage, abs=1e-6)) for s in masked_samples] == [
        (s.completion_ids, s.advantage) for s in samples
    ]
    for key in ("reward_mean", "pass_rate", "groups_kept", "reward/term"):
        assert masked_record[key] == pytest.approx(record[key]), key
    assert masked_record["episodes_masked"] == 2.0
    assert masked_record["masked/sandbox_died"] == 1.0 and masked_record["masked/verifier_unavailable"] == 1.0
    assert "episodes_masked" not in record


def test_a_group_left_with_fewer_than_two_episodes_is_dropped():
    groups = [
        group("a", [episode(0, 1.0), episode(1, 0.0, "sandbox_died"), episode(2, 0.0, "environment_error")]),
        group("b", [episode(0, 1.0), episode(1, 0.0), episode(2, 0.0)]),
    ]
    record, samples, advantages = score_step(config("grpo", False), groups)
    assert record["groups_kept"] == 1 and record["episodes_masked"] == 2.0
    assert torch.equal(advantages[0], torch.zeros(3))
    assert [s.completion_ids[0] for s in samples] == [10, 11, 12]  # group b's three episodes only
