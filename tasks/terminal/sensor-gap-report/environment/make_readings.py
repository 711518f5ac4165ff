import csv
import random
from datetime import datetime, timedelta, timezone
from pathlib import Path

rng = random.Random(404)
start = datetime(2024, 6, 1, 6, 0, tzinfo=timezone.utc)
offsets = [timezone.utc, timezone(timedelta(hours=2)), timezone(timedelta(hours=-5)), timezone(timedelta(hours=5, minutes=30))]
rows = []
gaps = {"s-01": [(40, 47), (200, 206)], "s-02": [(90, 96), (300, 330)], "s-03": [(10, 15), (150, 152)],
        "t-10": [(0, 0)]}
for sensor, skip in gaps.items():
    minute = 0
    limit = 360 if sensor != "t-10" else 30
    while minute < limit:
        hole = next((b for a, b in skip if a < minute < b), None)
        if hole is not None:
            minute = hole
            continue
        t = start + timedelta(minutes=minute)
        tz = rng.choice(offsets)
        stamp = t.astimezone(tz).isoformat()
        if tz is timezone.utc and rng.random() < 0.5:
            stamp = stamp.replace("+00:00", "Z")
        value = f"{rng.uniform(15, 30):.2f}"
        rows.append([sensor, stamp, value])
        if rng.random() < 0.03:  # the same instant again, maybe in another offset
            tz2 = rng.choice(offsets)
            rows.append([sensor, t.astimezone(tz2).isoformat(), value])
        minute += rng.choice([1, 1, 1, 2, 3, 5])
# invalid values: these rows do not count
for sensor, minute, bad in (("s-01", 120.5, "NaN"), ("s-02", 95, "err"), ("s-03", 12, ""), ("s-01", 44, "inf")):
    t = start + timedelta(minutes=minute)
    rows.append([sensor, t.isoformat(), bad])
rng.shuffle(rows)
Path("/app/sensors").mkdir(parents=True, exist_ok=True)
with open("/app/sensors/readings.csv", "w", newline="") as fh:
    w = csv.writer(fh, lineterminator="\n")
    w.writerow(["sensor_id", "timestamp", "value"])
    w.writerows(rows)
