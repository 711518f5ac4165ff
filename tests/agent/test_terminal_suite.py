"""The built-in terminal suite is solvable and not trivially passed."""

import pytest

from posttrain.agent.loop import run_episodes
from posttrain.agent.policies import NopPolicy, OraclePolicy
from posttrain.tasks.harbor import load_harbor_suite
from tests.agent.conftest import SUITE


@pytest.fixture(scope="module")
def suite():
    return load_harbor_suite(SUITE)


@pytest.mark.timeout(900)
def test_the_oracle_passes_every_task(suite, tokenizer, needs_bwrap):
    trajectories = run_episodes(suite, OraclePolicy(), tokenizer)
    failed = {t.task_id: (t.reward.details.get("stdout_tail", "")[-300:], t.error) for t in trajectories
              if not t.reward.passed}
    assert not failed


@pytest.mark.timeout(900)
def test_doing_nothing_passes_no_task(suite, tokenizer, needs_bwrap):
    trajectories = run_episodes(suite, NopPolicy(), tokenizer)
    assert [t.task_id for t in trajectories if t.reward.passed] == []
    assert all(t.failure_mode == "wrong_answer" for t in trajectories)
