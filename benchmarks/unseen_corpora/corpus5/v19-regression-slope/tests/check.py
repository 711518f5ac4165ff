import sys
try:
    got = open("/app/slope.txt").read().strip()
except Exception:
    sys.exit(1)
sys.exit(0 if got == "1.9700" else 1)
