#!/bin/bash
python3 - <<'EOF'
import hashlib
target = open('/app/pin.sha256').read().strip()
for n in range(10 ** 6):
    pin = f'{n:06d}'
    if hashlib.sha256(pin.encode()).hexdigest() == target:
        open('/app/pin.txt', 'w').write(pin + '\n')
        break
EOF
