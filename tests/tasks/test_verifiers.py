import pytest

from posttrain.tasks.custom_rewards import WORKER
from posttrain.tasks.records import Task
from posttrain.tasks.sources import ReasoningGymSource
from posttrain.tasks.verifiers import get_verifier, score


def task(verifier: str, answer, rule: str | None = None) -> Task:
    metadata = {"answer_extraction": rule} if rule else {}
    return Task(id="t/1", domain="t", instruction="q", verifier=verifier, answer=answer, metadata=metadata)


def test_exact_normalises_case_and_space():
    assert score("  Paris ", task("exact", "paris")).passed
    assert not score("Lyon", task("exact", "paris")).passed


def test_numeric_tolerates_formatting():
    assert score("The total is 1,234.", task("numeric", 1234)).value == 1.0
    assert score("about 0.30000000001", task("numeric", "0.3")).passed
    assert not score("no number", task("numeric", 3)).passed


def test_math_verify_checks_equivalence_not_strings():
    assert score("\\frac{1}{2}", task("math", "0.5", rule="full")).passed
    assert score("so the answer is \\boxed{2\\sqrt{2}}", task("math", "\\sqrt{8}", rule="boxed")).passed
    assert not score("\\boxed{3}", task("math", "\\sqrt{8}", rule="boxed")).passed


def test_reasoning_gym_uses_the_generators_own_scorer():
    source = ReasoningGymSource(
        "arith",
        "basic_arithmetic",
        seed=3,
        size=10,
        params={},
        prompt_template="{question}",
        answer_extraction="last_number",
    )
    t = source.get(0)
    assert score(f"It equals {t.answer}", t).passed
    assert not score("It equals 999999", t).passed


def test_unknown_verifier():
    with pytest.raises(KeyError, match="unknown verifier 'regex'"):
        get_verifier("regex")


def coin_flip_task(**metadata):
    source = ReasoningGymSource(
        "coins", "coin_flip", seed=0, size=4, params={}, prompt_template="{question}", answer_extraction="answer_tag"
    )
    t = source.get(0)
    return t.model_copy(update={"metadata": {**t.metadata, **metadata}})


def test_a_reasoning_gym_scorer_that_raises_scores_zero_with_a_named_error():
    """coin_flip's own score_answer raises OverflowError on the answer 1e999999 (reasoning-gym
    0.1.25): the sample scores 0 and says which scorer failed and how; the next sample is scored."""
    t = coin_flip_task()
    reward = score("<answer>1e999999</answer>", t)
    assert reward.value == 0.0 and not reward.passed
    [message] = reward.details["reward_errors"]
    assert message.startswith("reasoning-gym:coin_flip: raised OverflowError"), message
    assert score(f"<answer>{t.answer}</answer>", t).passed


def test_a_reasoning_gym_scorer_that_outlives_its_timeout_is_stopped():
    WORKER.close()  # a fresh worker takes seconds to import reasoning-gym: far past 1 ms
    slow = score("<answer>0.5</answer>", coin_flip_task(reward_timeout_s=0.001))
    assert slow.value == 0.0 and slow.details["reward_errors"] == ["reasoning-gym:coin_flip: timed out after 0.001 s"]
    t = coin_flip_task()
    assert score(f"<answer>{t.answer}</answer>", t).passed  # a fresh worker scores the next one
