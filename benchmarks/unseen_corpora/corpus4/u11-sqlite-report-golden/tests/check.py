import sys
want = 'customer_id,name,total_paid_cents\n3,Cyan Inc,15000\n1,Acme Corp,12000\n2,Bolt Ltd,12000\n5,Echo GmbH,9000\n'
try:
    got = open("/app/report.csv", newline="").read().replace("\r\n", "\n")
except OSError:
    sys.exit(1)
sys.exit(0 if got.rstrip("\n") + "\n" == want else 1)
