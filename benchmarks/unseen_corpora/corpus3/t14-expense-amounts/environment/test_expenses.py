import sys
sys.path.insert(0, '/app')
from expenses import parse_amount


def test_dollars_with_grouping():
    assert parse_amount('$1,234.50') == 123450


def test_currency_code():
    assert parse_amount('USD 7.25') == 725


def test_negative_forms():
    assert parse_amount('-3') == -300
    assert parse_amount('(12.00)') == -1200


def test_fraction():
    assert parse_amount('0.5') == 50
