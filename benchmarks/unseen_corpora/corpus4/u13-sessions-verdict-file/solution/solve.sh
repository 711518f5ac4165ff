#!/bin/bash
python3 - <<'EOF'
import json, datetime as dt
ev = {}
for line in open('/app/events.jsonl'):
    e = json.loads(line)
    ev.setdefault(e['user'], []).append(dt.datetime.fromisoformat(e['ts']))
out = {}
for u, ts in ev.items():
    ts.sort()
    n = 1
    for a, b in zip(ts, ts[1:]):
        if (b - a).total_seconds() > 1800:
            n += 1
    out[u] = n
json.dump(out, open('/app/sessions.json', 'w'))
EOF
