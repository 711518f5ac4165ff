import csv, os, sys
OUT = '/app/contacts_clean.csv'
if not os.path.exists(OUT):
    print('no cleaned file produced yet - nothing to compare')
    sys.exit(0)
rows = [tuple(r) for r in csv.reader(open(OUT))]
want = [('name', 'email'), ('Ada', 'ada@example.org'), ('Bo', 'bo@example.org'), ('Cy', 'cy@example.net')]
sys.exit(0 if rows == want else 1)
