import pytest

from posttrain.engine.interface import Completion
from posttrain.pipeline.experience_buffer import StalenessBuffer, group_head_version, group_versions
from posttrain.pipeline.rollout import RolloutGroup
from posttrain.tasks.records import Reward, Task


def group(task_id, *token_versions):
    task = Task(id=task_id, domain="d", instruction="q", verifier="exact", answer="a")
    completions = [
        Completion("r", i, [1], [5] * len(v), [-0.1] * len(v), "stop", "x", v[0], list(v))
        for i, v in enumerate(token_versions)
    ]
    return RolloutGroup(task, completions, [Reward(value=0.0, passed=False)] * len(completions))


def test_head_version_is_the_oldest_token_of_any_sample():
    g = group("t", [3, 3, 4], [2, 4])  # a partial rollout: begun under 2, finished under 4
    assert group_head_version(g) == 2 and group_versions(g) == {2, 3, 4}


def test_take_hands_out_the_oldest_fresh_groups_and_removes_stale_ones():
    buffer = StalenessBuffer(max_staleness=1)
    buffer.put("2:0", (2, 0), group("a", [4]))
    buffer.put("1:1", (1, 1), group("b", [4, 5]))
    buffer.put("1:0", (1, 0), group("c", [2, 5]))  # head 2: gap 3 at version 5
    buffer.put("3:0", (3, 0), group("d", [5]))
    batch, stale = buffer.take(2, trainer_version=5)
    assert [e.key for e in batch] == ["1:1", "2:0"] and [e.key for e in stale] == ["1:0"]
    assert buffer.keys() == {"3:0"}


def test_no_batch_until_enough_fresh_groups():
    buffer = StalenessBuffer(max_staleness=0)
    buffer.put("1:0", (1, 0), group("a", [1]))
    buffer.put("1:1", (1, 1), group("b", [0]))
    batch, stale = buffer.take(2, trainer_version=1)
    assert batch == [] and [e.key for e in stale] == ["1:1"] and len(buffer) == 1
    with pytest.raises(ValueError, match="already buffered"):
        buffer.put("1:0", (1, 0), group("a", [1]))
    with pytest.raises(ValueError):
        StalenessBuffer(-1)
