import json

import pytest

from posttrain.errors import TaskSourceError
from posttrain.tasks.domains import Domain, DomainMixture
from posttrain.tasks.sources import JsonlSource, ReasoningGymSource, content_key


def jsonl(tmp_path, rows):
    path = tmp_path / "tasks.jsonl"
    path.write_text("\n".join(r if isinstance(r, str) else json.dumps(r) for r in rows) + "\n")
    return path


def test_jsonl_rows_become_tasks(tmp_path):
    path = jsonl(
        tmp_path,
        [
            {"id": "q1", "prompt": "2+2?", "answer": "4", "verifier": "numeric"},
            {"prompt": "x^2=4, x>0", "answer": "2", "verifier": "math"},
        ],
    )
    source = JsonlSource("toy", path, "Q: {question}", None)
    assert len(source) == 2
    first = source.get(0)
    assert (first.id, first.instruction, first.verifier, first.answer) == ("toy/q1", "Q: 2+2?", "numeric", "4")
    assert source.get(1).id == "toy/2"


@pytest.mark.parametrize(
    "row, message",
    [
        ("{not json", r"tasks.jsonl:1: not valid JSON"),
        ({"answer": "4"}, r"tasks.jsonl:1: missing field 'prompt'"),
        (
            {"prompt": "p", "answer": "4", "verifier": "vibes"},
            r"tasks.jsonl:1: field 'verifier': unknown verifier 'vibes'",
        ),
        ({"prompt": "p", "answer": "4", "extra": 1}, r"tasks.jsonl:1: unknown field\(s\) \['extra'\]"),
        ([1, 2], r"tasks.jsonl:1: each line must be a JSON object"),
    ],
)
def test_jsonl_errors_name_file_line_and_field(tmp_path, row, message):
    with pytest.raises(TaskSourceError, match=message):
        JsonlSource("toy", jsonl(tmp_path, [row]), "{question}", None)


def test_missing_file(tmp_path):
    with pytest.raises(TaskSourceError, match="does not exist"):
        JsonlSource("toy", tmp_path / "nope.jsonl", "{question}", None)


def test_unknown_generator_is_a_clear_error():
    with pytest.raises(TaskSourceError, match="unknown reasoning-gym generator 'no_such_gen'"):
        ReasoningGymSource("d", "no_such_gen", 0, 10, {}, "{question}", "answer_tag")


def test_bad_generator_params_are_a_clear_error():
    with pytest.raises(TaskSourceError, match="rejected params"):
        ReasoningGymSource("d", "basic_arithmetic", 0, 10, {"min_terms": 5, "max_terms": 2}, "{question}", "answer_tag")


def test_every_reasoning_gym_generator_loads_by_name():
    from reasoning_gym.factory import DATASETS

    failures = {}
    # `composite` mixes other generators and has no default mix: it needs params (tested apart).
    for name in sorted(set(DATASETS) - {"composite"}):
        try:
            task = ReasoningGymSource(
                name, name, seed=0, size=2, params={}, prompt_template="{question}", answer_extraction="answer_tag"
            ).get(0)
            assert task.instruction and task.verifier == "reasoning-gym"
        except Exception as exc:  # collect all, report together
            failures[name] = repr(exc)[:200]
    assert not failures, failures


def test_composite_without_params_is_a_clear_error():
    with pytest.raises(TaskSourceError, match="reasoning-gym:composite rejected params"):
        ReasoningGymSource("mix", "composite", 0, 10, {}, "{question}", "answer_tag")


def test_heldout_is_disjoint_from_training_even_with_duplicates(tmp_path):
    # 3 distinct prompts repeated: the split must keep every copy on one side.
    rows = [{"prompt": f"p{i % 3}", "answer": str(i % 3)} for i in range(30)]
    domain = Domain("toy", JsonlSource("toy", jsonl(tmp_path, rows), "{question}", None), 1.0, heldout_size=1, seed=0)
    heldout = {content_key(t) for t in domain.heldout}
    cursor, seen = 0, set()
    for _ in range(50):
        task, cursor = domain.training_task(cursor)
        seen.add(content_key(task))
    assert seen and not (seen & heldout)


def test_procedural_heldout_disjoint_and_sized():
    source = ReasoningGymSource(
        "add",
        "basic_arithmetic",
        seed=0,
        size=5000,
        params={"min_terms": 2, "max_terms": 2, "min_digits": 1, "max_digits": 1},
        prompt_template="{question}",
        answer_extraction="last_number",
    )
    domain = Domain("add", source, 1.0, heldout_size=40, seed=0)
    heldout = {content_key(t) for t in domain.heldout}
    assert len(heldout) == 40
    cursor = 0
    for _ in range(300):
        task, cursor = domain.training_task(cursor)
        assert content_key(task) not in heldout


def test_too_few_items_for_heldout(tmp_path):
    rows = [{"prompt": "same", "answer": "1"}] * 5
    with pytest.raises(TaskSourceError, match="only 1 distinct"):
        Domain("toy", JsonlSource("toy", jsonl(tmp_path, rows), "{question}", None), 1.0, heldout_size=2, seed=0)


def test_mixture_is_deterministic_weighted_and_resumable(tmp_path):
    def make():
        a = Domain(
            "a",
            JsonlSource(
                "a", jsonl(tmp_path, [{"prompt": f"a{i}", "answer": "1"} for i in range(50)]), "{question}", None
            ),
            weight=3.0,
            heldout_size=5,
            seed=0,
        )
        b = Domain(
            "b", JsonlSource("b", tmp_path / "tasks.jsonl", "{question}", None), weight=1.0, heldout_size=5, seed=1
        )
        return DomainMixture([a, b], seed=7)

    straight = make()
    run = [[t.id for t in straight.sample_step(s, 8)] for s in range(1, 11)]
    counts = {"a": 0, "b": 0}
    for ids in run:
        for i in ids:
            counts[i.split("/")[0]] += 1
    assert counts["a"] > 2 * counts["b"]  # weight 3:1

    interrupted = make()
    first = [[t.id for t in interrupted.sample_step(s, 8)] for s in range(1, 6)]
    state = interrupted.state_dict()
    resumed = make()
    resumed.load_state_dict(state)
    rest = [[t.id for t in resumed.sample_step(s, 8)] for s in range(6, 11)]
    assert first + rest == run
