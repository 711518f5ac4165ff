import sys
want = 'region,revenue\nsouth,133.70\neast,131.71\nnorth,105.49\nwest,80.22\n'
try:
    got = open("/app/summary.csv", newline="").read().replace("\r\n", "\n")
except OSError:
    sys.exit(1)
sys.exit(0 if got.rstrip("\n") + "\n" == want else 1)
