import json, sys
try:
    d = json.load(open('/app/fit.json'))
    ok = abs(d['slope'] - 1.960) < 1e-6 and abs(d['intercept'] - 1.100) < 1e-6
except Exception:
    ok = False
sys.exit(0 if ok else 1)
