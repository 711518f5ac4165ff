#!/bin/bash
python3 - <<'EOF'
import json
t = open('/app/poem.txt').read()
words = t.split()
longest = ''
for w in words:
    w = w.strip('.,;:!?')
    if len(w) > len(longest):
        longest = w
json.dump({'lines': t.count('\n'), 'words': len(words), 'chars': len(t), 'longest_word': longest},
          open('/app/stats.json', 'w'))
EOF
