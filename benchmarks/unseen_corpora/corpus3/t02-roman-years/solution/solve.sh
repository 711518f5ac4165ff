#!/bin/bash
python3 - <<'EOF'
table = [(1000,'M'),(900,'CM'),(500,'D'),(400,'CD'),(100,'C'),(90,'XC'),(50,'L'),(40,'XL'),
         (10,'X'),(9,'IX'),(5,'V'),(4,'IV'),(1,'I')]
def roman(n):
    out = ''
    for v, s in table:
        while n >= v:
            out += s; n -= v
    return out
nums = [int(x) for x in open('/app/years.txt').read().split()]
open('/app/roman.txt', 'w').write('\n'.join(roman(n) for n in nums) + '\n')
EOF
