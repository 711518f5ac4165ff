"""The mixture policies: what each does with what it observed, the floor, and resume."""

import pytest

from posttrain.curriculum.mixture_policies import make_policy


def feed(policy, domain, pass_rate, signal, times):
    for _ in range(times):
        policy.observe(domain, pass_rate, signal)


def test_static_keeps_the_configured_weights():
    policy = make_policy("static")
    feed(policy, "a", 1.0, 0.0, 5)
    assert policy.shares({"a": 1.0, "b": 3.0}) == pytest.approx({"a": 0.25, "b": 0.75})


def test_learnability_favours_what_can_still_be_learned_and_keeps_a_floor():
    policy = make_policy("learnability", floor=0.05)
    feed(policy, "solved", 1.0, 0.0, 8)
    feed(policy, "learnable", 0.5, 0.8, 8)
    feed(policy, "hopeless", 0.0, 0.0, 8)
    shares = policy.shares({"solved": 1.0, "learnable": 1.0, "hopeless": 1.0, "new": 1.0})
    assert sum(shares.values()) == pytest.approx(1.0)
    assert shares["solved"] == pytest.approx(0.05) and shares["hopeless"] == pytest.approx(0.05)  # re-probed
    assert shares["learnable"] == pytest.approx(shares["new"])  # unknown counts as p = 1/2
    assert shares["learnable"] > 0.4


def test_learnability_forgets_beyond_its_window():
    policy = make_policy("learnability", window=4)
    feed(policy, "a", 1.0, 0.0, 10)
    feed(policy, "a", 0.5, 0.0, 4)
    assert policy.pass_rate("a") == 0.5


def test_bandit_tries_every_arm_then_prefers_the_one_with_signal():
    policy = make_policy("bandit", floor=0.0, bandit_c=0.1)
    assert policy.shares({"a": 1.0, "b": 1.0}) == pytest.approx({"a": 0.5, "b": 0.5})
    feed(policy, "a", 0.5, 0.9, 20)
    untried = policy.shares({"a": 1.0, "b": 1.0})
    assert untried["b"] == pytest.approx(1.0)  # an arm never pulled comes first
    feed(policy, "b", 1.0, 0.0, 20)
    shares = policy.shares({"a": 1.0, "b": 1.0})
    assert shares["a"] > 0.7 > shares["b"] > 0  # b still gets its exploration bonus


def test_state_round_trips_and_unknown_policy_is_refused():
    policy = make_policy("bandit", window=3)
    feed(policy, "a", 0.25, 0.5, 5)
    again = make_policy("bandit", window=3)
    again.load_state_dict(policy.state_dict())
    assert again.shares({"a": 1.0, "b": 2.0}) == policy.shares({"a": 1.0, "b": 2.0})
    assert again.pulls == {"a": 5} and list(again.pass_rates["a"]) == [0.25] * 3
    with pytest.raises(ValueError, match="unknown mixture policy 'ucb'"):
        make_policy("ucb")


def test_sequential_trains_one_domain_per_phase_in_order():
    policy = make_policy("sequential", phase_steps=3)
    weights = {"a": 1.0, "b": 1.0, "c": 1.0}
    current = [max(policy.shares(weights, step), key=policy.shares(weights, step).get) for step in range(1, 11)]
    assert current == ["a"] * 3 + ["b"] * 3 + ["c"] * 4  # the last domain keeps any steps left over
    assert policy.shares(weights, 4) == {"a": 0.0, "b": 1.0, "c": 0.0}
