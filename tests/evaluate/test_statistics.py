import pytest

from posttrain.evaluate.statistics import paired_bootstrap_ci


def test_constant_improvement_has_a_degenerate_interval():
    delta, low, high = paired_bootstrap_ci([0, 0, 1, 1], [1, 1, 1, 1])
    # diffs are [1, 1, 0, 0]: mean 0.5; resampled means range over k/4
    assert delta == 0.5
    assert 0.0 <= low <= 0.5 <= high <= 1.0


def test_identical_runs_give_zero():
    assert paired_bootstrap_ci([1, 0, 1], [1, 0, 1]) == (0.0, 0.0, 0.0)


def test_clear_gain_excludes_zero():
    before = [0.0] * 100
    after = [1.0] * 40 + [0.0] * 60
    delta, low, high = paired_bootstrap_ci(before, after, samples=4000)
    assert delta == pytest.approx(0.4)
    assert 0.25 < low < 0.4 < high < 0.55


def test_length_mismatch():
    with pytest.raises(ValueError):
        paired_bootstrap_ci([1], [1, 0])
