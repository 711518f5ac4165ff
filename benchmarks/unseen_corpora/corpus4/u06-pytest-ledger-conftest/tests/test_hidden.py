from ledger import balances


def test_debits_subtract():
    e = [{"acct": "a", "type": "debit", "amount": "5.00"}]
    assert balances(e) == {"a": "-5.00"}


def test_decimal_exactness():
    e = [{"acct": "x", "type": "credit", "amount": "0.10"}] * 3 + [
        {"acct": "x", "type": "debit", "amount": "0.30"}
    ]
    assert balances(e) == {"x": "0.00"}


def test_many_accounts():
    e = [
        {"acct": "a", "type": "credit", "amount": "1.005"},
        {"acct": "b", "type": "debit", "amount": "2.50"},
        {"acct": "a", "type": "credit", "amount": "1.005"},
    ]
    assert balances(e) == {"a": "2.01", "b": "-2.50"}
