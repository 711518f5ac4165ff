import sys
try:
    got = open("/app/mean.txt").read().strip()
except Exception:
    sys.exit(1)
print("got", got)
sys.exit(0 if got == "2.68" else 1)
