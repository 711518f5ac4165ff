#!/bin/bash
set -euo pipefail
python3 - <<'PY'
import csv
import json
from decimal import Decimal

billing = {}
with open("/app/exports/billing.csv", newline="", encoding="utf-8") as fh:
    for row in csv.DictReader(fh):
        inv = int(row["invoice_id"])
        billing[inv] = {"customer": int(row["customer_id"].strip().lstrip("Cc")), "date": row["date"].strip(),
                        "amount": Decimal(row["amount"].strip())}

crm = {}
with open("/app/exports/crm.csv", newline="", encoding="utf-8-sig") as fh:
    for row in csv.DictReader(fh, delimiter=";"):
        inv = int(row["Invoice"].strip().removeprefix("INV-"))
        day, month, year = row["Date"].strip().split("/")
        total = row["Total"].strip().removesuffix("EUR").strip().replace(".", "").replace(",", ".")
        crm[inv] = {"customer": int(row["Customer"]), "date": f"{year}-{month}-{day}", "amount": Decimal(total)}

both = sorted(set(billing) & set(crm))
mismatches = []
for inv in both:
    fields = [k for k in ("amount", "customer", "date") if billing[inv][k] != crm[inv][k]]
    if fields:
        mismatches.append({"invoice": inv, "fields": fields})
report = {
    "billing_invoices": len(billing),
    "crm_invoices": len(crm),
    "matched": len(both) - len(mismatches),
    "only_in_billing": sorted(set(billing) - set(crm)),
    "only_in_crm": sorted(set(crm) - set(billing)),
    "mismatches": mismatches,
    "billing_total": f"{sum(r['amount'] for r in billing.values()):.2f}",
    "crm_total": f"{sum(r['amount'] for r in crm.values()):.2f}",
}
with open("/app/reconciliation.json", "w") as out:
    json.dump(report, out, indent=2)
PY
