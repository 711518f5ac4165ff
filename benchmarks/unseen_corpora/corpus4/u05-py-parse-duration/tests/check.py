import sys
sys.path.insert(0, "/app")
try:
    from durations import parse_duration
except Exception as e:
    print("import failed", e)
    sys.exit(1)

CASES = {
    "45s": 45,
    "1h30m": 5400,
    "2d": 172800,
    "1h 5m 10s": 3910,
    "90m": 5400,
    "1d2h3m4s": 93784,
    "0s": 0,
}
for text, want in CASES.items():
    try:
        got = parse_duration(text)
    except Exception as e:
        print("error on", text, e)
        sys.exit(1)
    if not (got == want):
        print(f"parse_duration({text!r}) = {got!r}, want {want}")
        sys.exit(1)
print("ok")
