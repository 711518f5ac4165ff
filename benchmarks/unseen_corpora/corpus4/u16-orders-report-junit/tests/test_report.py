import json, os

P = "/app/report.json"


def load():
    assert os.path.isfile(P) and not os.path.islink(P)
    with open(P) as f:
        return json.load(f)


def test_keys():
    assert set(load()) == {"top_customers", "paid_orders", "refunded_orders"}


def test_counts():
    d = load()
    assert d["paid_orders"] == 7
    assert d["refunded_orders"] == 2


def test_top_customers():
    assert load()["top_customers"] == [{'customer': 'kim', 'total': '120.00'}, {'customer': 'max', 'total': '100.01'}, {'customer': 'lee', 'total': '100.00'}]


def test_types():
    d = load()
    assert all(type(x["total"]) is str for x in d["top_customers"])
