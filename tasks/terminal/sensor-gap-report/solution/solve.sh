#!/bin/bash
set -euo pipefail
python3 - /app/sensors <<'PY'
import csv, json, math, sys
from datetime import datetime, timezone
root = sys.argv[1]
data = {}
with open(f"{root}/readings.csv", newline="") as fh:
    for row in csv.DictReader(fh):
        try:
            value = float(row["value"])
        except ValueError:
            continue
        if not math.isfinite(value):
            continue
        t = datetime.fromisoformat(row["timestamp"].replace("Z", "+00:00")).astimezone(timezone.utc)
        data.setdefault(row["sensor_id"], {}).setdefault(t, value)
fmt = lambda t: t.strftime("%Y-%m-%dT%H:%M:%SZ")
gaps, summary = [], {}
for sensor in sorted(data):
    times = sorted(data[sensor])
    diffs = [(b - a) for a, b in zip(times, times[1:])]
    for a, b in zip(times, times[1:]):
        minutes = (b - a).total_seconds() / 60
        if minutes > 5:
            gaps.append([sensor, fmt(a), fmt(b), int(minutes)])
    values = [data[sensor][t] for t in times]
    summary[sensor] = {"readings": len(times), "first": fmt(times[0]), "last": fmt(times[-1]),
                       "mean": round(sum(values) / len(values), 3),
                       "max_gap_minutes": int(max(diffs).total_seconds() // 60) if diffs else 0}
with open(f"{root}/gaps.csv", "w", newline="") as fh:
    w = csv.writer(fh, lineterminator="\n")
    w.writerow(["sensor_id", "gap_start", "gap_end", "minutes"])
    w.writerows(gaps)
with open(f"{root}/summary.json", "w") as fh:
    json.dump(summary, fh, indent=2, sort_keys=True)
PY
