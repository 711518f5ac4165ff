#!/bin/bash
set -euo pipefail
# --- deterministic commits (fixed identity and dates) ---
export GIT_AUTHOR_NAME="Dana Dev" GIT_AUTHOR_EMAIL="dana@example.com"
export GIT_COMMITTER_NAME="Dana Dev" GIT_COMMITTER_EMAIL="dana@example.com"
_t=1700000000
commit() {
    export GIT_AUTHOR_DATE="@$_t +0000" GIT_COMMITTER_DATE="@$_t +0000"
    _t=$((_t + 3600))
    git add -A
    git commit -q -m "$@"
}
git config --global user.name "Dev" && git config --global user.email "dev@example.com"
cd /app
git init -q -b main
cat > pricing.py <<'X'
from decimal import Decimal, ROUND_HALF_UP

CENT = Decimal("0.01")


def line_total(price, qty):
    """Price (a string like "19.99") times quantity, rounded half-up to cents."""
    return (Decimal(price) * qty).quantize(CENT, rounding=ROUND_HALF_UP)


def order_total(lines):
    """Sum of the line totals of [(price, qty), ...]."""
    total = sum((line_total(p, q) for p, q in lines), Decimal("0"))
    return total.quantize(CENT, rounding=ROUND_HALF_UP)
X
printf '# pricing\n' > README.md
commit "Initial pricing module"
cat >> pricing.py <<'X'


def with_tax(total, rate_percent):
    """Total plus tax at rate_percent, rounded half-up to cents."""
    return (Decimal(total) * (1 + Decimal(rate_percent) / 100)).quantize(CENT, rounding=ROUND_HALF_UP)
X
commit "Add tax helper"
python3 - <<'X'
s = open("pricing.py").read()
s = s.replace('from decimal import Decimal, ROUND_HALF_UP\n\nCENT = Decimal("0.01")\n', 'from decimal import Decimal, ROUND_HALF_UP\n\nCENT = Decimal("0.01")\nFAST = True  # float math is faster\n')
s = s.replace('    return (Decimal(price) * qty).quantize(CENT, rounding=ROUND_HALF_UP)\n', '    return round(float(price) * qty, 2)\n')
s = s.replace('    total = sum((line_total(p, q) for p, q in lines), Decimal("0"))\n    return total.quantize(CENT, rounding=ROUND_HALF_UP)\n', '    total = sum(line_total(p, q) for p, q in lines)\n    return round(total, 2)\n')
open("pricing.py", "w").write(s)
X
commit "Use float arithmetic for totals"
python3 - <<'X'
s = open("pricing.py").read()
s = s.replace('def order_total(lines):\n    """Sum of the line totals of [(price, qty), ...]."""\n    total = sum(line_total(p, q) for p, q in lines)\n    return round(total, 2)\n',
 'def order_total(lines, discount_percent=0):\n    """Sum of the line totals of [(price, qty), ...], minus discount_percent percent."""\n    total = sum(line_total(p, q) for p, q in lines)\n    total = total * (1 - discount_percent / 100)\n    return round(total, 2)\n')
open("pricing.py", "w").write(s)
X
commit "Support order discounts"
printf '# pricing\n\nMoney helpers. Amounts are strings like "19.99".\n' > README.md
commit "Expand README"
