import re, sys
try:
    lines = [l.strip() for l in open('/app/inventory.md') if l.strip()]
except OSError:
    sys.exit(1)
if len(lines) != 5 or not re.fullmatch(r'\|[\s:|-]+\|', lines[1]):
    sys.exit(1)
cells = [[c.strip() for c in l.strip('|').split('|')] for i, l in enumerate(lines) if i != 1]
want = [['item', 'qty', 'bin'], ['bolt M4', '120', 'A3'], ['washer', '800', 'A4'], ['hex nut', '64', 'B1']]
sys.exit(0 if cells == want else 1)
