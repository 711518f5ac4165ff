import pytest
import units


def test_metric():
    assert units.convert(2.5, 'km', 'm') == pytest.approx(2500)


def test_imperial():
    assert units.convert(1, 'mi', 'ft') == pytest.approx(5280)
    assert units.convert(1, 'ft', 'cm') == pytest.approx(30.48)


def test_unknown():
    with pytest.raises(ValueError):
        units.convert(1, 'furlong', 'm')
