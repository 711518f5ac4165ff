#!/bin/bash
python3 - <<'PY'
p = "/app/duration.py"
s = open(p).read()
head = s[:s.index('import re')]
body = '''import re

UNITS = {"w": 604800, "d": 86400, "h": 3600, "m": 60, "s": 1}
_ORDER = "wdhms"
_PART = re.compile(r"([0-9]+)([wdhms])\\s*", re.IGNORECASE)


def parse_duration(text):
    rest = text.strip()
    if not rest:
        raise ValueError(f"empty duration: {text!r}")
    total = 0
    last = -1
    pos = 0
    while pos < len(rest):
        m = _PART.match(rest, pos)
        if not m:
            raise ValueError(f"invalid duration: {text!r}")
        unit = m.group(2).lower()
        rank = _ORDER.index(unit)
        if rank <= last:
            raise ValueError(f"unit {unit!r} out of order or repeated in {text!r}")
        last = rank
        total += int(m.group(1)) * UNITS[unit]
        pos = m.end()
    return total


def format_duration(seconds):
    if seconds < 0:
        raise ValueError("negative duration")
    if seconds == 0:
        return "0s"
    parts = []
    for unit, size in UNITS.items():
        amount, seconds = divmod(seconds, size)
        if amount:
            parts.append(f"{amount}{unit}")
    return "".join(parts)
'''
open(p, "w").write(head + body)
PY
