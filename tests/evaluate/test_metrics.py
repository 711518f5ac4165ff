import pytest

from posttrain.agent.trajectory import ToolCallRecord, Trajectory, TurnRecord
from posttrain.evaluate.metrics import attempt_row, failure_category, pass_at_k, summarize, tool_call_accuracy
from posttrain.tasks.records import Reward


@pytest.mark.parametrize(
    "n, c, k, expected",
    [
        (5, 2, 1, 0.4),
        (5, 2, 2, 1 - 3 / 10),  # 1 - C(3,2)/C(5,2)
        (10, 3, 3, 1 - 35 / 120),  # 1 - C(7,3)/C(10,3)
        (5, 0, 3, 0.0),
        (5, 5, 1, 1.0),
        (4, 2, 3, 1.0),  # fewer failures than k: some draw always passes
    ],
)
def test_pass_at_k_is_the_unbiased_estimator(n, c, k, expected):
    assert pass_at_k(n, c, k) == pytest.approx(expected)


def test_pass_at_k_rejects_impossible_counts():
    with pytest.raises(ValueError):
        pass_at_k(3, 4, 1)
    with pytest.raises(ValueError):
        pass_at_k(3, 1, 4)


def trajectory(passed=False, mode=None, stop="finish", errors=()):
    t = Trajectory("t", "model")
    turn = TurnRecord(0, [1, 2, 3], [4, 5], [-0.1, -0.2], [0, 0], "x", cached_prompt_tokens=2)
    turn.tool_calls = [ToolCallRecord("bash", {}, "out", e, None, 0.1) for e in errors]
    t.turns.append(turn)
    t.reward = Reward(value=float(passed), passed=passed)
    t.failure_mode, t.stop_reason = mode, stop
    return t


@pytest.mark.parametrize(
    "mode, errors, expected",
    [
        ("timeout", (), "agent_timeout"),
        ("max_steps", (), "budget_exhausted"),
        ("cost", (), "budget_exhausted"),
        ("idle", ("malformed_call",), "no_tool_calls"),
        ("verifier_timeout", (), "verifier_timeout"),
        ("verifier_error", (), "verifier_failed"),
        ("verifier_unavailable", (), "verifier_failed"),
        ("verifier_killed", (), "verifier_failed"),
        ("context_overflow", (), "context_overflow"),
        ("sandbox_died", (), "sandbox_error"),
        ("policy_error", (), "engine_error"),
        ("engine_error", (), "engine_error"),
        ("wrong_answer", ("nonzero_exit", "timeout", None), "tool_errors"),
        ("wrong_answer", ("nonzero_exit", None, None), "wrong_answer"),
    ],
)
def test_failure_categories(mode, errors, expected):
    assert failure_category(trajectory(mode=mode, errors=errors)) == expected
    assert failure_category(trajectory(passed=True)) is None


def test_tool_call_accuracy_counts_well_formed_and_successful_calls():
    runs = [trajectory(errors=(None, "output_truncated", "malformed_call")), trajectory(errors=("nonzero_exit",))]
    assert tool_call_accuracy(runs) == pytest.approx(2 / 4)
    assert tool_call_accuracy([trajectory()]) is None


def test_summary_from_rows():
    rows = []
    for task, outcomes in (("a", [True, False, True, False]), ("b", [False] * 4), ("c", [True] * 4)):
        for attempt, passed in enumerate(outcomes):
            t = trajectory(passed=passed, mode=None if passed else "max_steps", errors=(None,))
            rows.append(
                attempt_row(
                    task,
                    attempt,
                    "cat1" if task != "c" else "cat2",
                    t,
                    f"{task}.json",
                    {"prompt": 1.0, "completion": 2.0},
                )
            )
    summary = summarize(rows, ks=[1, 2, 4])
    assert summary["n_tasks"] == 3 and summary["n_attempts"] == 12
    assert summary["pass_at_1"] == pytest.approx((0.5 + 0 + 1) / 3)
    assert summary["pass_at_k"]["2"] == pytest.approx(((1 - 1 / 6) + 0 + 1) / 3)
    assert summary["pass_at_k"]["4"] == pytest.approx((1 + 0 + 1) / 3)
    assert summary["failure_modes"] == {"budget_exhausted": 6}
    assert summary["tool_call_accuracy"] == 1.0
    assert summary["tokens"] == {"in": 36, "out": 24}
    assert summary["cost"] == pytest.approx(12 * (3 * 1.0 + 2 * 2.0) / 1000)
    assert summary["pass_rate_by_category"] == {"cat1": 0.25, "cat2": 1.0}
    assert summarize(list(reversed(rows)), ks=[1, 2, 4]) == summary  # order does not matter
