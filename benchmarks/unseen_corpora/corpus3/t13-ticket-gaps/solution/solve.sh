#!/bin/bash
python3 - <<'EOF'
# one bit per possible uint32 ticket: 2**32 bits = 512 MiB
bits = bytearray(1 << 29)
nums = [int(l) for l in open('/app/tickets.txt') if l.strip()]
for n in nums:
    bits[n >> 3] |= 1 << (n & 7)
lo, hi = min(nums), max(nums)
gaps = [n for n in range(lo + 1, hi) if not bits[n >> 3] & (1 << (n & 7))]
open('/app/gaps.txt', 'w').write(''.join(f'{n}\n' for n in gaps))
EOF
