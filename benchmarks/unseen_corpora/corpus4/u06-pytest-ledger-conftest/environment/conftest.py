import pytest


@pytest.fixture
def sample_entries():
    return [
        {"acct": "cash", "type": "credit", "amount": "100.00"},
        {"acct": "cash", "type": "debit", "amount": "30.50"},
        {"acct": "rent", "type": "credit", "amount": "800.00"},
    ]
