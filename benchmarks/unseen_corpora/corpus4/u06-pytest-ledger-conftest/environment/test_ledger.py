from ledger import balances


def test_sample(sample_entries):
    assert balances(sample_entries) == {"cash": "69.50", "rent": "800.00"}
