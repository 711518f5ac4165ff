"""The seesaw monitor on constructed evaluations: a fall with a rise is a seesaw, noise is not,
the reactions, and a mixture that draws by them."""

import pytest

from posttrain.config import MonitorConfig
from posttrain.curriculum.seesaw import SeesawMonitor, mcnemar_one_sided, wilson_interval
from posttrain.curriculum.seesaw_reaction import SeesawReaction


def items(correct: int, n: int = 40, offset: int = 0) -> list[bool]:
    return [(i - offset) % n < correct for i in range(n)]


def test_mcnemar_and_wilson():
    assert mcnemar_one_sided(0, 0) == 1.0
    assert mcnemar_one_sided(10, 0) == pytest.approx(2**-10)
    assert mcnemar_one_sided(5, 5) > 0.5
    low, high = wilson_interval(0, 20)
    assert low == 0.0 and 0.1 < high < 0.2
    assert wilson_interval(20, 20)[1] == 1.0


def test_a_fall_while_another_domain_rises_is_a_seesaw_alarm():
    monitor = SeesawMonitor(alpha=0.05)
    assert monitor.observe(0, {"a": items(30), "b": items(10)}) == []
    assert monitor.observe(2, {"a": items(32), "b": items(12)}) == []
    (alarm,) = monitor.observe(4, {"a": items(14), "b": items(28)})
    assert alarm.kind == "seesaw" and alarm.falling.domain == "a" and alarm.falling.from_step == 2
    assert alarm.falling.items_worse == 18 and alarm.falling.items_better == 0
    assert [r.domain for r in alarm.rising] == ["b"]
    assert "a fell 0.800 -> 0.350 since step 2" in alarm.message() and "b rose" in alarm.message()
    assert alarm.to_json()["falling"]["p_value"] < 1e-4
    assert monitor.falling("a") and not monitor.falling("b")


def test_noise_raises_nothing_and_a_lone_fall_is_not_a_seesaw():
    monitor = SeesawMonitor(alpha=0.05)
    monitor.observe(0, {"a": items(20), "b": items(20)})
    assert monitor.observe(1, {"a": items(18, offset=3), "b": items(21, offset=1)}) == []  # changes both ways
    (alarm,) = monitor.observe(2, {"a": items(5), "b": items(20)})
    assert alarm.kind == "fall" and alarm.rising == []


def test_the_monitor_resumes_from_its_state():
    monitor = SeesawMonitor()
    monitor.observe(0, {"a": items(30), "b": items(10)})
    again = SeesawMonitor()
    again.load_state_dict(monitor.state_dict())
    assert [a.kind for a in again.observe(3, {"a": items(10), "b": items(30)})] == ["seesaw"]


def test_reweight_boosts_until_recovery_and_refresh_takes_the_next_steps():
    monitor = SeesawMonitor()
    monitor.observe(0, {"a": items(30), "b": items(10)})
    alarms = monitor.observe(2, {"a": items(10), "b": items(30)})
    reweight = SeesawReaction("reweight", factor=2.0, max_boost=3.0)
    assert reweight.on_alarms(2, alarms) == ["reweight: a weight x2 until it recovers"]
    reweight.on_alarms(4, alarms)
    assert reweight.weights({"a": 1.0, "b": 1.0}) == {"a": 3.0, "b": 1.0}  # capped at max_boost
    assert reweight.on_recovered(["a"]) and reweight.weights({"a": 1.0, "b": 1.0}) == {"a": 1.0, "b": 1.0}
    refresh = SeesawReaction("refresh", refresh_steps=2)
    refresh.on_alarms(2, alarms)
    assert [refresh.refresh_domain(s) for s in (3, 4, 5)] == ["a", "a", None]
    assert SeesawReaction("none").on_alarms(2, alarms) == []


def test_a_mixture_reacts_to_its_monitor(tmp_path):
    from posttrain.tasks.domains import Domain, DomainMixture
    from posttrain.tasks.sources import ReasoningGymSource

    def domain(name):
        source = ReasoningGymSource(
            name,
            "basic_arithmetic",
            seed=1,
            size=200,
            params={},
            prompt_template="{question}",
            answer_extraction="last_number",
        )
        return Domain(name, source, 1.0, heldout_size=40, seed=0)

    mixture = DomainMixture([domain("a"), domain("b")], seed=0, monitor=MonitorConfig(every=2, reaction="refresh"))
    mixture.after_evaluation(0, {"a": items(30), "b": items(10)})
    metrics, alarms, actions = mixture.after_evaluation(2, {"a": items(10), "b": items(30)})
    assert [a.falling.domain for a in alarms] == ["a"] and actions == ["refresh: steps 3-4 draw only from a"]
    assert metrics["monitor/a/accuracy"] == 0.25 and metrics["monitor/alarms"] == 1.0
    assert metrics["monitor/a/ci_low"] < 0.25 < metrics["monitor/a/ci_high"]
    assert {t.domain for t in mixture.sample_step(3, 8)} == {"a"}
    resumed = DomainMixture([domain("a"), domain("b")], seed=0, monitor=MonitorConfig(every=2, reaction="refresh"))
    resumed.load_state_dict(mixture.state_dict())
    assert [t.id for t in resumed.sample_step(4, 8)] == [t.id for t in mixture.sample_step(4, 8)]
    assert {t.domain for t in mixture.sample_step(5, 16)} == {"a", "b"}


def test_learnability_passes_over_saturated_items_and_reprobes_them(tmp_path):
    from types import SimpleNamespace

    from posttrain.config import MixtureConfig
    from posttrain.tasks.domains import Domain, DomainMixture
    from posttrain.tasks.sources import JsonlSource

    def mixture(tmp, policy):
        data = tmp / "d.jsonl"
        data.write_text("".join(f'{{"id": "q{i}", "prompt": "{i}", "answer": "{i}"}}\n' for i in range(6)))
        source = JsonlSource("d", data, "{question}", "full")
        domain = Domain("d", source, 1.0, heldout_size=1, seed=0)
        return DomainMixture([domain], seed=0, mixture=MixtureConfig(policy=policy, reprobe_every=2))

    tmp = tmp_path
    learn = mixture(tmp, "learnability")
    first = learn.sample_step(1, 5)  # one epoch of the 5 training items
    solved = SimpleNamespace(task=first[0], rewards=[SimpleNamespace(passed=True)] * 4)
    learn.observe([solved])
    epoch_two = [t.id for t in learn.sample_step(2, 4)]
    assert first[0].id not in epoch_two  # passed over once
    assert first[0].id in [t.id for t in learn.sample_step(3, 5)]  # re-probed the 2nd time it comes up
    again = mixture(tmp, "learnability")
    again.load_state_dict(learn.state_dict())
    assert [t.id for t in again.sample_step(4, 5)] == [t.id for t in learn.sample_step(4, 5)]
    static = mixture(tmp, "static")
    static.sample_step(1, 5)
    static.observe([solved])
    assert first[0].id in [t.id for t in static.sample_step(2, 5)]


def test_benjamini_hochberg_keeps_the_discoveries_below_the_step_up_line():
    from posttrain.curriculum.seesaw import benjamini_hochberg

    p = {"a": 0.001, "b": 0.008, "c": 0.039, "d": 0.041, "e": 0.042, "f": 0.06, "g": 0.5}
    # q = 0.1, m = 7: the line k q / m is 0.014, 0.029, 0.043, 0.057, 0.071, 0.086, 0.1; the
    # largest p_(k) under it is p_(6) = 0.06, so the six smallest are kept
    assert benjamini_hochberg(p, 0.1) == {"a", "b", "c", "d", "e", "f"}
    assert benjamini_hochberg(p, 0.01) == {"a"}
    assert benjamini_hochberg({}, 0.1) == set()


def test_across_a_hundred_domains_fdr_control_keeps_the_real_fall_and_drops_chance_ones():
    """A hundred domains, one that really fell (30 -> 8 of 40) and many that wobble by chance:
    tested one by one at alpha 0.05 some wobbles alarm; Benjamini-Hochberg at 10% keeps the fall
    alone."""
    import random

    rng = random.Random(0)
    before = {f"d{i:03d}": [rng.random() < 0.5 for _ in range(40)] for i in range(100)}
    after = {d: [x if rng.random() < 0.75 else not x for x in v] for d, v in before.items()}  # chance changes
    before["d042"], after["d042"] = items(30), items(8)
    per_domain, controlled = SeesawMonitor(alpha=0.05), SeesawMonitor(alpha=0.05, fdr=0.1)
    for monitor in (per_domain, controlled):
        monitor.observe(0, before)
    loose = {a.falling.domain for a in per_domain.observe(1, after)}
    kept = {a.falling.domain for a in controlled.observe(1, after)}
    assert "d042" in loose and len(loose) > 1
    assert kept == {"d042"}


def test_a_rotating_monitor_compares_each_domain_with_the_evaluations_that_covered_it():
    monitor = SeesawMonitor(alpha=0.05)
    monitor.observe(0, {"a": items(30), "b": items(30), "c": items(10)})  # every domain, before training
    assert monitor.observe(2, {"a": items(31)}) == []
    assert monitor.observe(4, {"b": items(29), "c": items(12)}) == []
    (alarm,) = monitor.observe(6, {"a": items(9)})
    assert alarm.falling.domain == "a" and alarm.falling.from_step == 2 and alarm.kind == "fall"
    assert monitor.falling("a") and not monitor.falling("b") and not monitor.falling("c")


def test_a_sequential_check_stops_when_the_items_so_far_lean_no_worse():
    from posttrain.curriculum.seesaw import steady_so_far

    best = [True] * 5 + [False] * 5 + [True] * 30
    assert steady_so_far(best, best[:10])  # nothing changed
    assert steady_so_far(best, [False] + [True] * 5 + [False] * 4)  # one worse, one better
    assert not steady_so_far(best, [False, False] + best[2:10])  # two worse, none better: go on


def test_a_check_stopped_early_is_compared_on_its_prefix_and_never_becomes_the_best():
    monitor = SeesawMonitor(alpha=0.05)
    monitor.observe(0, {"a": items(20)})
    # a check stopped after 10 items, all right (better than the best's 20 of 40 overall)
    assert monitor.observe(2, {"a": [True] * 10}) == []
    assert monitor.best_items("a") == items(20)  # the complete entry stays the best
    # a later check whose first 10 items all turned wrong is a fall on those 10 items
    (alarm,) = monitor.observe(4, {"a": [False] * 10 + items(20)[10:]})
    assert alarm.falling.from_step == 0 and alarm.falling.items_worse == 10 and alarm.falling.items_better == 0
    partial = SeesawMonitor(alpha=0.05)
    partial.observe(0, {"a": items(20)})
    (fall,) = partial.observe(2, {"a": [False] * 8})  # a prefix of 8 that all fell
    assert (fall.falling.accuracy_from, fall.falling.accuracy_to, fall.falling.items_worse) == (1.0, 0.0, 8)
