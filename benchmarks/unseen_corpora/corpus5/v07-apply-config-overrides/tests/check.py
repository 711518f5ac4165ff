import sys
def parse(path):
    entries = []
    for raw in open(path, encoding="utf-8").read().splitlines():
        if raw.strip() == "" or raw.startswith("#"):
            entries.append(("raw", raw.strip()))
        else:
            k, sep, v = raw.partition("=")
            if not sep:
                return None
            entries.append((k.strip(), v))
    while entries and entries[-1] == ("raw", ""):
        entries.pop()
    return entries
want = [("raw", "# ledger service"), ("NAME", "ledger"), ("PORT", "9090"), ("raw", ""),
        ("raw", "# workers"), ("WORKERS", "2"), ("LOG_LEVEL", "warn"),
        ("DATA_DIR", "/var/lib/ledger"), ("raw", "# PORT=1 (old value, keep this comment)"),
        ("CACHE_MB", "256"), ("BANNER", "hello=world")]
try:
    got = parse("/app/service.conf")
    ov = open("/app/overrides.env").read()
except Exception as e:
    print("error", e); sys.exit(1)
print(got)
ok = got == want and ov == "LOG_LEVEL=warn\nCACHE_MB=256\nPORT=9090\nBANNER=hello=world\n"
sys.exit(0 if ok else 1)
