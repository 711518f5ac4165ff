import pytest

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
