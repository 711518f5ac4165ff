"""User reward functions (`verifier = "python:module:function"`) run in a real worker process:
a float or a dict with extras is the reward; one that raises, hangs or returns something out of
range becomes that sample's reward error with the message, and the next call works."""

import time
from pathlib import Path

import pytest

from posttrain.config import DomainConfig
from posttrain.errors import TaskSourceError
from posttrain.pipeline.build import build_source
from posttrain.pipeline.step_scoring import reward_function_metrics
from posttrain.tasks.records import Task
from posttrain.tasks.verifiers import score

HERE = Path(__file__).parent


def task(answer, verifier="python:user_rewards:misbehaving", **metadata):
    metadata = {"reward_search_path": str(HERE), "reward_timeout_s": 1.0, **metadata}
    return Task(id="t/0", domain="t", instruction="say 42", verifier=verifier, answer=answer, metadata=metadata)


@pytest.mark.parametrize(
    "kind, message",
    [
        ("raise", "raised ValueError: cannot parse the completion"),
        ("range", "returned 2.5, outside [0, 1]"),
        ("text", "returned str 'yes'; expected a number in [0, 1]"),
        ("no-reward", "returned a dict without 'reward'"),
        ("exit", "its worker process died"),
    ],
)
def test_a_failing_reward_is_the_samples_error_with_its_message(kind, message):
    reward = score("42", task(kind))
    assert reward.value == 0.0 and not reward.passed
    [error] = reward.details["reward_errors"]
    assert error.startswith("python:user_rewards:misbehaving: ") and message in error


def test_a_hanging_reward_times_out_and_the_next_call_gets_a_fresh_worker():
    started = time.perf_counter()
    reward = score("42", task("hang", reward_timeout_s=0.5))
    assert reward.details["reward_errors"] == ["python:user_rewards:misbehaving: timed out after 0.5 s"]
    assert time.perf_counter() - started < 5
    assert score("42", task("fine")).value == 1.0  # the hung worker was killed and replaced
    assert score("", task("fine")).value == 0.0
    assert score("42", task("print")).value == 0.75  # the user's stdout does not mix with the replies


def test_a_slow_import_or_worker_start_does_not_count_against_the_rewards_time_limit():
    # a fresh worker on a loaded machine, or a heavy import, is not a hanging reward
    reward = score("42", task("x", verifier="python:slow_import_rewards:exact", reward_timeout_s=0.5))
    assert reward.value == 1.0 and not reward.details.get("reward_errors")


def test_a_dict_reward_brings_extra_metrics_and_weights_combine_rewards():
    single = score("x" * 10, task("42", verifier="python:user_rewards:length_reward"))
    assert single.value == 0.25 and single.details["reward_extras"] == {"chars": 10.0}
    combined = task("42", verifier="weighted", rewards=[["exact", 1.0], ["python:user_rewards:length_reward", 0.5]])
    reward = score("42", combined)
    assert reward.value == pytest.approx(1.0 + 0.5 * 2 / 40)
    assert reward.details["rewards"] == {"exact": 1.0, "python:user_rewards:length_reward": 2 / 40}
    assert not reward.passed  # the length reward is not at its maximum
    broken = score(
        "42", task("raise", verifier="weighted", rewards=[["exact", 1.0], ["python:user_rewards:misbehaving", 1.0]])
    )
    assert broken.value == 0.0 and len(broken.details["reward_errors"]) == 1  # "42" != "raise": exact gives 0 too
    metrics = reward_function_metrics([single, reward, broken])
    assert metrics["reward_errors"] == 1.0 and metrics["reward_extra/chars"] == 6.0


def test_domain_verifiers_replace_the_tasks_own(tmp_path):
    (tmp_path / "tasks.jsonl").write_text('{"prompt": "say 42", "answer": "42"}\n')
    (tmp_path / "my_rewards.py").write_text("def half(task, completion):\n    return 0.5\n")
    cfg = DomainConfig(
        name="d", source="jsonl:tasks.jsonl", verifier=["exact", "python:my_rewards:half"], verifier_weights=[2, 1]
    )
    source = build_source(cfg, tmp_path)
    assert score("42", source.get(0)).value == 2.5 and len(source) == 1


@pytest.mark.parametrize(
    "verifier, message",
    [
        ("python:no_such_module:f", "domain 'd': verifier 'python:no_such_module:f': cannot import no_such_module"),
        ("python:my_rewards:absent", "module my_rewards has no function 'absent'"),
    ],
)
def test_a_reward_function_that_cannot_be_imported_fails_at_start(tmp_path, verifier, message):
    (tmp_path / "tasks.jsonl").write_text('{"prompt": "say 42", "answer": "42"}\n')
    (tmp_path / "my_rewards.py").write_text("def half(task, completion):\n    return 0.5\n")
    with pytest.raises(TaskSourceError, match=message.replace("(", r"\(")):
        build_source(DomainConfig(name="d", source="jsonl:tasks.jsonl", verifier=verifier), tmp_path)


@pytest.mark.parametrize(
    "fields, message",
    [
        ({"verifier": "python:only_module"}, "expected python:<module>:<function>"),
        ({"verifier": "fuzzy"}, "unknown; choose one of exact, numeric, math"),
        ({"verifier": ["exact", "math"], "verifier_weights": [1.0]}, "1 weights for 2 verifiers"),
        ({"verifier_weights": [1.0]}, "verifier_weights needs a list of verifiers"),
    ],
)
def test_bad_verifier_settings_are_refused(fields, message):
    with pytest.raises(ValueError, match=message):
        DomainConfig(name="d", source="jsonl:x.jsonl", **fields)
