import sys
try:
    got = open("/app/chain.txt").read().strip()
except Exception:
    sys.exit(1)
sys.exit(0 if got == "cc328b5e7124fda4b4159dad71f1ea04a6973d3e2b77cc3df68571087209c49e" else 1)
