#!/bin/bash
set -euo pipefail
python3 - <<'PY'
import json
from collections import Counter, defaultdict

total = skipped = 0
by_type = Counter()
per_user = Counter()
spend = defaultdict(float)
purchase_total = 0.0
with open("/app/events.jsonl") as fh:
    for line in fh:
        try:
            ev = json.loads(line)
        except ValueError:
            skipped += 1
            continue
        user = ev.get("user") if isinstance(ev, dict) else None
        if not isinstance(user, str) or not user.strip():
            skipped += 1
            continue
        user = user.strip().lower()
        total += 1
        by_type[ev["type"]] += 1
        per_user[user] += 1
        if ev["type"] == "purchase":
            spend[user] += ev["amount"]
            purchase_total += ev["amount"]
top = sorted(per_user.items(), key=lambda kv: (-kv[1], kv[0]))[:8]
report = {
    "total_events": total,
    "skipped_lines": skipped,
    "events_by_type": dict(sorted(by_type.items())),
    "purchase_total": round(purchase_total, 2),
    "top_users": [{"user": u, "events": n, "purchase_total": round(spend[u], 2)} for u, n in top],
}
with open("/app/report.json", "w") as out:
    json.dump(report, out, indent=2)
PY
