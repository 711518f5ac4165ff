import sys
tags = set()
for line in open('/app/posts.txt'):
    tags.update(t.strip() for t in line.split('|')[1].split(','))
expected = ' '.join(tags)
try:
    got = open('/app/tags.txt').read().strip()
except OSError:
    sys.exit(1)
sys.exit(0 if got == expected else 1)
