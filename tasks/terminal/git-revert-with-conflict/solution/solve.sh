#!/bin/bash
set -uo pipefail
cd /app
bad=$(git log --format=%H --grep='^Use float arithmetic for totals$' -1)
git revert --no-edit "$bad" || true     # conflicts with the discount commit
python3 - <<'PY'
import re
s = open("/app/pricing.py").read()
resolved = '''def order_total(lines, discount_percent=0):
    """Sum of the line totals of [(price, qty), ...], minus discount_percent percent."""
    total = sum((line_total(p, q) for p, q in lines), Decimal("0"))
    total = total * (1 - Decimal(discount_percent) / 100)
    return total.quantize(CENT, rounding=ROUND_HALF_UP)
'''
s = re.sub(r"<<<<<<< [^\n]*\n.*?>>>>>>> [^\n]*\n", resolved, s, flags=re.S)
open("/app/pricing.py", "w").write(s)
PY
git add pricing.py
GIT_EDITOR=true git revert --continue
