import json
from pathlib import Path

EXPECTED = {
    "billing_invoices": 110,
    "crm_invoices": 110,
    "matched": 91,
    "only_in_billing": [10038, 10210, 10273, 10292, 10516, 10605, 10609, 10702, 10735, 10789],
    "only_in_crm": [10066, 10126, 10231, 10479, 10519, 10584, 10618, 10712, 10718, 10821],
    "mismatches": [
        {"invoice": 10070, "fields": ["date"]},
        {"invoice": 10171, "fields": ["date"]},
        {"invoice": 10220, "fields": ["customer"]},
        {"invoice": 10451, "fields": ["amount"]},
        {"invoice": 10494, "fields": ["amount", "customer"]},
        {"invoice": 10527, "fields": ["amount", "date"]},
        {"invoice": 10745, "fields": ["amount"]},
        {"invoice": 10782, "fields": ["customer"]},
        {"invoice": 10791, "fields": ["amount"]},
    ],
    "billing_total": "485125.55",
    "crm_total": "483437.58",
}


def load():
    return json.loads(Path("/app/reconciliation.json").read_text())


def test_exact_keys():
    assert set(load()) == set(EXPECTED)


def test_counts():
    r = load()
    for key in ("billing_invoices", "crm_invoices", "matched"):
        assert r[key] == EXPECTED[key], key


def test_only_in_lists():
    r = load()
    assert r["only_in_billing"] == EXPECTED["only_in_billing"]
    assert r["only_in_crm"] == EXPECTED["only_in_crm"]


def test_mismatches():
    assert load()["mismatches"] == EXPECTED["mismatches"]


def test_totals_are_exact_strings():
    r = load()
    assert r["billing_total"] == EXPECTED["billing_total"]
    assert r["crm_total"] == EXPECTED["crm_total"]
