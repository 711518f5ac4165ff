import os, re, sys
p = "/app/app.env"
if os.path.islink(p) or not os.path.isfile(p):
    sys.exit(1)
vals = {}
for line in open(p, encoding="utf-8", errors="replace"):
    line = line.strip()
    if not line or line.startswith("#"):
        continue
    m = re.fullmatch(r"([A-Z_][A-Z0-9_]*)=(.*)", line)
    if not m:
        sys.exit(1)
    if m.group(1) in vals:
        sys.exit(1)
    vals[m.group(1)] = m.group(2)
sys.exit(0 if vals == {'APP_NAME': 'orders-api', 'DB_HOST': 'db.internal', 'DB_PORT': '5433', 'LOG_LEVEL': 'warn', 'FEATURE_FLAGS': 'audit_log,bulk_export,new_checkout'} else 1)
