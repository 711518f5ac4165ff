"""reasoning-gym entries survive a JSON round trip: the arc generators' reference answers pass
their own verifier after the task was serialized, as every task is on its way to a worker."""

import numpy
import pytest

from posttrain.tasks import gym_entries
from posttrain.tasks.records import Task
from posttrain.tasks.sources import ReasoningGymSource, WithoutItems
from posttrain.tasks.verifiers import score


@pytest.mark.parametrize("generator", ["arc_agi", "rearc", "arc_1d", "basic_arithmetic"])
def test_reference_answer_passes_after_a_json_round_trip(generator):
    source = ReasoningGymSource(
        generator, generator, seed=0, size=8, params={}, prompt_template="{question}", answer_extraction="answer_tag"
    )
    for index in range(4):
        task = Task.model_validate_json(source.get(index).model_dump_json())
        reward = score(f"<answer>{task.answer}</answer>", task)
        assert reward.passed, (generator, index, reward)


def test_tuples_sets_and_arrays_come_back_equal():
    value = {
        "grid": ((1, 2), (3, 4)),
        "seen": {1, 2},
        "frozen": frozenset({(1, 2)}),
        3: [numpy.int64(5)],
        "array": numpy.array([[1, 2]], dtype=numpy.int8),
        "text": "x",
        "none": None,
    }
    import json

    back = gym_entries.decode(json.loads(json.dumps(gym_entries.encode(value))))
    assert back["grid"] == ((1, 2), (3, 4)) and isinstance(back["grid"][0], tuple)
    assert back["seen"] == {1, 2} and back["frozen"] == frozenset({(1, 2)})
    assert back["3"] == [5] and back["text"] == "x" and back["none"] is None
    assert back["array"].dtype == numpy.int8 and back["array"].tolist() == [[1, 2]]


class _Numbers:
    domain = "n"

    def __len__(self):
        return 10

    def get(self, index):
        return index


def test_without_items_skips_exactly_the_left_out_indices():
    for left_out in ({0}, {9}, {3, 4, 5}, {0, 2, 4, 6, 8}, set()):
        source = WithoutItems(_Numbers(), left_out)
        assert [source.get(i) for i in range(len(source))] == [i for i in range(10) if i not in left_out]
        assert source.domain == "n"
