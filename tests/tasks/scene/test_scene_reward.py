"""The scene verifier as a quality gate would probe it: the oracle passes every sampled task,
doing nothing scores 0, and each known way to game the reward scores below a real partial
solution (docs/scene.md)."""

import json
import math
import time

import pytest

from posttrain.tasks.scene import MAX_DIFFICULTY, generate, score_reply, solve
from posttrain.tasks.scene.schema import SceneAnswer, SceneTask

SEEDS = range(60)
DIFFICULTIES = range(1, MAX_DIFFICULTY + 1)


def oracle(task: SceneTask) -> dict:
    return json.loads(solve(task).model_dump_json())


def reward(answer: dict | str, task: SceneTask) -> float:
    return score_reply(answer if isinstance(answer, str) else json.dumps(answer), task).reward


@pytest.mark.parametrize("difficulty", DIFFICULTIES)
def test_the_oracle_satisfies_every_constraint_of_every_sampled_task(difficulty):
    for seed in SEEDS:
        task = generate(difficulty, seed)
        score = score_reply(solve(task).model_dump_json(), task)
        assert score.valid and score.passed and score.reward == 1.0, (difficulty, seed, score.to_json())
        assert score.constraints and all(c.held for c in score.constraints)


def test_generation_is_seeded_and_the_difficulty_knob_grows_the_scene():
    assert generate(2, 5) == generate(2, 5)
    assert generate(2, 5) != generate(2, 6)
    sizes = [sum(len(generate(d, s).objects) for s in range(20)) for d in (1, 2, 3, 4)]
    relations = [sum(len(generate(d, s).relations) for s in range(20)) for d in (1, 2, 3, 4)]
    assert sizes == sorted(sizes) and sizes[0] < sizes[-1]
    assert relations == sorted(relations) and relations[0] < relations[-1]
    assert all(generate(3, s).clear_path is not None for s in range(5))
    with pytest.raises(ValueError, match="difficulty"):
        generate(MAX_DIFFICULTY + 1, 0)


@pytest.mark.parametrize(
    "reply",
    ["", "I would put the table by the wall.", "{}", '{"objects": []}', "```json\n```", '{"objects": [}'],
)
def test_empty_or_unparsable_answers_are_invalid_and_score_zero(reply):
    task = generate(2, 0)
    score = score_reply(reply, task)
    assert not score.valid and score.reward == 0.0 and score.reason
    assert len(score.constraints) == len(task.objects) + len(task.relations) and not any(
        c.held for c in score.constraints
    )


def test_the_answer_is_found_in_a_fenced_block_or_as_the_first_object_of_the_reply():
    task = generate(1, 3)
    text = solve(task).model_dump_json(indent=1)
    for reply in (f"Here is the scene:\n```json\n{text}\n```\nDone.", f"Sure! {text} Hope it helps {{}}", text):
        assert score_reply(reply, task).reward == 1.0


def _partial(task: SceneTask) -> dict:
    """A real partial solution: the oracle's layout with the last listed object left out."""
    answer = oracle(task)
    answer["objects"] = answer["objects"][:-1]
    return answer


def _stacked_duplicates(task: SceneTask) -> dict:
    answer = oracle(task)
    for obj in answer["objects"]:
        obj["position"] = [0.0, 0.0, 0.0]
    return answer


def _same_id_stacked(task: SceneTask) -> dict:
    first = oracle(task)["objects"][0]
    return {"objects": [dict(first) for _ in range(10)]}


def _huge_container(task: SceneTask) -> dict:
    """One object blown up to hold all the others."""
    answer = oracle(task)
    room = task.room
    answer["objects"][0].update(size=[room.width, room.height, room.depth], position=[0.0, 0.0, 0.0])
    return answer


def _huge_new_container(task: SceneTask) -> dict:
    answer = oracle(task)
    answer["objects"].append(
        {"id": "everything", "shape": "box", "size": [40, 40, 40], "position": [0, 0, 0], "color": "red"}
    )
    return answer


def _replaced_by_others(task: SceneTask) -> dict:
    """Objects the task asks for swapped for easier ones of the model's own."""
    answer = oracle(task)
    for i, obj in enumerate(answer["objects"][1:], start=1):
        obj["id"] = f"thing_{i}"
    return answer


def _wrong_objects_under_right_names(task: SceneTask) -> dict:
    answer = oracle(task)
    for obj in answer["objects"]:
        obj.update(shape="sphere", size=[0.1, 0.1, 0.1], position=[obj["position"][0], 0.0, obj["position"][2]])
    return answer


def _nan_coordinates(task: SceneTask) -> str:
    answer = oracle(task)
    answer["objects"][0]["position"] = [float("nan"), 0.0, 0.0]
    return json.dumps(answer)  # Python writes NaN, as a model might


def _huge_coordinates(task: SceneTask) -> dict:
    answer = oracle(task)
    answer["objects"][0]["position"] = [1e308, 0.0, 0.0]
    return answer


def _infinite_size(task: SceneTask) -> str:
    answer = oracle(task)
    answer["objects"][0]["size"][0] = math.inf
    return json.dumps(answer).replace("Infinity", "1e999")  # a literal that parses to inf


def _degenerate(task: SceneTask) -> dict:
    answer = oracle(task)
    for obj in answer["objects"]:
        obj["size"] = [0.0, 0.0, 0.0]
    return answer


GAMES = {
    "duplicates stacked in one place": _stacked_duplicates,
    "one object repeated under one id": _same_id_stacked,
    "one object blown up to contain everything": _huge_container,
    "a new huge object containing everything": _huge_new_container,
    "required objects replaced by others": _replaced_by_others,
    "wrong objects under the right names": _wrong_objects_under_right_names,
    "NaN coordinates": _nan_coordinates,
    "1e308 coordinates": _huge_coordinates,
    "infinite sizes": _infinite_size,
    "degenerate zero-size objects": _degenerate,
}


@pytest.mark.parametrize("game", GAMES)
def test_gaming_answers_score_below_a_real_partial_solution(game):
    for difficulty in (1, 2, 3):
        for seed in range(8):
            task = generate(difficulty, seed)
            partial = reward(_partial(task), task)
            gamed = reward(GAMES[game](task), task)
            assert 0 < partial < 1
            assert gamed < partial, (game, difficulty, seed, gamed, partial)
            assert gamed <= 0.2, (game, difficulty, seed, gamed)


@pytest.mark.parametrize(
    ("game", "reason"),
    [
        (_nan_coordinates, "finite"),
        (_huge_coordinates, "less than or equal to 100"),
        (_degenerate, "greater than or equal to 0.01"),
        (_infinite_size, "finite"),
        (_same_id_stacked, "appears 10 times"),
        (_huge_new_container, "'everything' is not one the task asks for"),
    ],
)
def test_the_gate_names_why_an_answer_is_invalid(game, reason):
    task = generate(2, 1)
    score = score_reply(game(task) if isinstance(game(task), str) else json.dumps(game(task)), task)
    assert not score.valid and score.reward == 0.0 and reason in score.reason


def test_partial_credit_counts_each_constraint_that_holds():
    task = generate(2, 4)
    answer = oracle(task)
    total = len(task.objects) + len(task.relations)
    moved = next(o for o in answer["objects"] if o["position"][1] == 0.0)
    moved["position"] = [moved["position"][0], 0.5, moved["position"][2]]  # floats half a metre up
    score = score_reply(json.dumps(answer), task)
    failed = [c for c in score.constraints if not c.held]
    assert score.valid and failed and failed[0].name == f"placed({moved['id']})" and "floats" in failed[0].why
    assert score.reward == pytest.approx((total - len(failed)) / total)


def _crafted(kind: str) -> str:
    if kind == "a million objects":
        one = '{"id": "a", "shape": "box", "size": [1, 1, 1], "position": [0, 0, 0], "color": "red"}'
        return '{"objects": [' + ", ".join([one] * 1_000_000) + "]}"
    if kind == "deeply nested groups":
        return '{"objects": [' + '{"children": [' * 10_000 + "]}" * 10_000 + "]}"
    if kind == "a thousand objects in bounds":
        one = '{"id":"a%d","shape":"box","size":[1,1,1],"position":[0,0,0],"color":"red"}'
        return '{"objects":[' + ",".join(one % i for i in range(1000))[:31_000].rsplit(",{", 1)[0] + "]}"
    if kind == "one long padded object":
        return '{"objects": [], "note": "' + "x" * 100_000 + '"}'
    raise AssertionError(kind)


@pytest.mark.parametrize(
    ("kind", "reason"),
    [
        ("a million objects", "characters; at most"),
        ("deeply nested groups", "nests deeper than"),
        ("a thousand objects in bounds", "at most 32 items"),
        ("one long padded object", "longer than 32000 characters"),
    ],
)
def test_crafted_huge_answers_are_rejected_fast(kind, reason):
    task = generate(3, 0)
    reply = _crafted(kind)
    started = time.perf_counter()
    score = score_reply(reply, task)
    elapsed = time.perf_counter() - started
    assert not score.valid and score.reward == 0.0
    assert reason in score.reason
    assert elapsed < 1.0, f"{kind}: {elapsed:.2f} s"


def test_rotation_is_checked_as_an_oriented_box_not_its_axis_aligned_hull():
    from posttrain.tasks.scene.geometry import footprint, overlaps, plan_gap
    from posttrain.tasks.scene.schema import SceneObject

    def box(x, z, yaw):
        return SceneObject(id="b", shape="box", size=(1, 1, 1), position=(x, 0, z), rotation=yaw, color="red")

    # a unit box turned 45 degrees reaches sqrt(2)/2 = 0.707 from its centre along x, along its diagonal
    diamond, square = box(0, 0, 45), box(1.3, 0.0, 0)
    assert not overlaps(diamond, square, 0.01)
    assert plan_gap(footprint(diamond), footprint(square)) == pytest.approx(1.3 - 0.5 - math.sqrt(0.5), abs=1e-9)
    assert overlaps(diamond, box(1.1, 0.0, 0), 0.01)
    assert not overlaps(box(0, 0, 0), box(1.0, 0.0, 0), 0.01)  # touching faces


def test_answers_round_trip_through_the_schema():
    task = generate(3, 2)
    answer = solve(task)
    assert SceneAnswer.model_validate_json(answer.model_dump_json()) == answer
    assert SceneTask.model_validate_json(task.model_dump_json()) == task
