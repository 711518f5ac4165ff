#!/bin/bash
set -euo pipefail
python3 - <<'PY'
import csv
from decimal import Decimal, ROUND_HALF_UP
emps = list(csv.DictReader(open("/app/hr/employees.csv", newline="")))
depts = list(csv.DictReader(open("/app/hr/departments.csv", newline="")))
names = {e["id"]: e["name"] for e in emps}
known = {d["dept_id"] for d in depts}
groups = {}
for e in emps:
    if e["status"] != "active":
        continue
    key = e["dept_id"] if e["dept_id"] in known else None
    groups.setdefault(key, []).append(int(e["salary"]))
def avg(v):
    if not v:
        return "0.00"
    return str((Decimal(sum(v)) / len(v)).quantize(Decimal("0.01"), rounding=ROUND_HALF_UP))
rows = []
for d in sorted(depts, key=lambda d: d["dept_name"]):
    v = groups.get(d["dept_id"], [])
    rows.append([d["dept_name"], len(v), avg(v), names.get(d["manager_id"], "")])
if None in groups:
    v = groups[None]
    rows.append(["(none)", len(v), avg(v), ""])
w = csv.writer(open("/app/hr/dept_summary.csv", "w", newline=""), lineterminator="\n")
w.writerow(["department", "headcount", "avg_salary", "manager"])
w.writerows(rows)
PY
