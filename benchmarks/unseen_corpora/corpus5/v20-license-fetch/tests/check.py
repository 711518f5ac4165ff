import sys
try:
    got = open("/app/osi.txt").read()
except Exception:
    sys.exit(1)
sys.exit(0 if got == "left-pad\nfoo\nbaz\n" else 1)
