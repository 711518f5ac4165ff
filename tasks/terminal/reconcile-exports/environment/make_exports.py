import csv
import io
import random
from decimal import Decimal
from pathlib import Path

rng = random.Random(77)
out = Path("/app/exports")
out.mkdir(parents=True, exist_ok=True)

invoices = {}
for n in range(120):
    inv = 10000 + n * 7 + rng.randint(0, 5)
    cents = rng.randint(500, 900000)
    invoices[inv] = {"customer": rng.randint(1, 60), "date": (2024, rng.randint(1, 12), rng.randint(1, 28)),
                     "amount": Decimal(cents) / 100}
ids = sorted(invoices)
rng.shuffle(ids)
only_billing = set(ids[:10])
only_crm = set(ids[10:20])
mismatch = ids[20:29]

billing = {i: dict(invoices[i]) for i in invoices if i not in only_crm}
crm = {i: dict(invoices[i]) for i in invoices if i not in only_billing}
kinds = ["amount", "customer", "date", "amount+date", "amount", "customer", "date", "customer+amount", "amount"]
for inv, kind in zip(mismatch, kinds):
    rec = crm[inv]
    if "amount" in kind:
        rec["amount"] = rec["amount"] + Decimal("0.01") * rng.choice([1, -1, 100])
    if "customer" in kind:
        rec["customer"] = rec["customer"] % 60 + 1
    if "date" in kind:
        y, m, d = rec["date"]
        rec["date"] = (y, m, d % 28 + 1)

notes = ["", "", "paid by card", "late, reminded twice", 'says "urgent"', "split; partial"]
rows = []
for inv in sorted(billing):
    r = billing[inv]
    y, m, d = r["date"]
    rows.append([str(inv), f"C{r['customer']:04d}", f"{y:04d}-{m:02d}-{d:02d}", f"{r['amount']:.2f}", rng.choice(notes)])
dups = rng.sample(rows, 5)
rows.extend(dups)
rng.shuffle(rows)
buf = io.StringIO()
w = csv.writer(buf, lineterminator="\n")
w.writerow(["invoice_id", "customer_id", "date", "amount", "note"])
w.writerows(rows)
(out / "billing.csv").write_text(buf.getvalue())


def eu(amount):
    whole, frac = f"{amount:.2f}".split(".")
    groups = []
    while len(whole) > 3:
        groups.insert(0, whole[-3:])
        whole = whole[:-3]
    groups.insert(0, whole)
    return ".".join(groups) + "," + frac + " EUR"


lines = ["Invoice;Customer;Date;Total"]
for inv in sorted(crm, key=lambda i: rng.random()):
    r = crm[inv]
    y, m, d = r["date"]
    lines.append(f"INV-{inv};{r['customer']};{d:02d}/{m:02d}/{y:04d};{eu(r['amount'])}")
(out / "crm.csv").write_bytes(("\ufeff" + "\r\n".join(lines) + "\r\n").encode("utf-8"))
