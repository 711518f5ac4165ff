import re
from datetime import datetime, timedelta
from pathlib import Path

import pytest

NAMES_MON = {m: i for i, m in enumerate(["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov",
                                         "dec"], 1)}
NAMES_DOW = {d: i for i, d in enumerate(["sun", "mon", "tue", "wed", "thu", "fri", "sat"])}
SPECIAL = {"@yearly": "0 0 1 1 *", "@annually": "0 0 1 1 *", "@monthly": "0 0 1 * *", "@weekly": "0 0 * * 0",
           "@daily": "0 0 * * *", "@midnight": "0 0 * * *", "@hourly": "0 * * * *"}


def parse_field(text, lo, hi, names=None):
    values = set()
    for part in text.lower().split(","):
        step = 1
        if "/" in part:
            part, s = part.split("/")
            step = int(s)
            assert step > 0
        if part == "*":
            a, b = lo, hi
        elif "-" in part:
            a, b = part.split("-")
            a, b = (names[x] if names and x in names else int(x) for x in (a, b))
        else:
            a = names[part] if names and part in names else int(part)
            b = hi if step != 1 else a
        top = 7 if hi == 6 else hi  # day of week: 0 and 7 are both Sunday
        assert lo <= a <= top and lo <= b <= top and a <= b, text
        values.update(range(a, b + 1, step))
    return values


def parse_line(line):
    if line.startswith("@"):
        special, cmd = line.split(None, 1)
        fields = SPECIAL[special].split()
    else:
        parts = line.split(None, 5)
        assert len(parts) == 6, line
        fields, cmd = parts[:5], parts[5]
    minute = parse_field(fields[0], 0, 59)
    hour = parse_field(fields[1], 0, 23)
    dom = parse_field(fields[2], 1, 31)
    mon = parse_field(fields[3], 1, 12, NAMES_MON)
    dow = {d % 7 for d in parse_field(fields[4], 0, 6, NAMES_DOW)}
    dom_star, dow_star = fields[2].startswith("*"), fields[4].startswith("*")
    return cmd.strip(), (minute, hour, dom, mon, dow, dom_star, dow_star)


def matches(spec, t):
    minute, hour, dom, mon, dow, dom_star, dow_star = spec
    if t.minute not in minute or t.hour not in hour or t.month not in mon:
        return False
    cron_dow = (t.weekday() + 1) % 7
    if dom_star or dow_star:
        return (t.day in dom) and (cron_dow in dow)
    return t.day in dom or cron_dow in dow


def jobs():
    env, out = {}, {}
    for raw in Path("/app/crontab").read_text().splitlines():
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        m = re.fullmatch(r"([A-Z_]+)\s*=\s*(.*)", line)
        if m:
            assert not out, "variables must come before the jobs"
            env[m.group(1)] = m.group(2)
            continue
        cmd, spec = parse_line(line)
        assert cmd not in out, f"duplicate command {cmd}"
        out[cmd] = spec
    return env, out


EXPECTED = {
    "/app/bin/backup.sh >> /app/logs/backup.log 2>&1": lambda t: (t.hour, t.minute) == (2, 30),
    "/app/bin/report.sh --format csv": lambda t: t.weekday() < 5 and 9 <= t.hour <= 17 and t.minute % 15 == 0,
    "/app/bin/cleanup.sh --days 30": lambda t: t.day == 1 and (t.hour, t.minute) == (0, 0),
    "/app/bin/rotate.sh": lambda t: t.weekday() == 6 and (t.hour, t.minute) == (3, 0),
    "/app/bin/healthcheck.sh > /dev/null 2>&1": lambda t: t.minute % 5 == 0,
}


def test_variables():
    env, _ = jobs()
    assert env == {"SHELL": "/bin/bash", "MAILTO": "ops@example.com"}


def test_exact_commands():
    _, out = jobs()
    assert set(out) == set(EXPECTED)


@pytest.mark.parametrize("cmd", sorted(EXPECTED))
def test_schedule(cmd):
    _, out = jobs()
    spec = out[cmd]
    want = EXPECTED[cmd]
    t = datetime(2024, 1, 1)
    end = datetime(2024, 3, 8)
    step = timedelta(minutes=1)
    while t < end:
        assert matches(spec, t) == want(t), (cmd, t)
        t += step
