#!/bin/bash
cat > /app/toc.py <<'EOF'
import re, sys

def main(path):
    fenced = False
    for line in open(path, encoding='utf-8'):
        if line.startswith('```'):
            fenced = not fenced
            continue
        m = None if fenced else re.match(r'(#{1,3}) (.+?)\s*$', line)
        if m:
            title = m.group(2)
            anchor = re.sub(r'[^\w\- ]', '', title.lower()).replace(' ', '-')
            print('  ' * (len(m.group(1)) - 1) + f'- [{title}](#{anchor})')

main(sys.argv[1])
EOF
