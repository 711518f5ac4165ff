#!/bin/bash
set -euo pipefail
cd /app
cat > shop/config.py <<'PY'
from decimal import Decimal

TAX_RATE = Decimal("0.20")
PY
sed -i 's/^from shop.report import TAX_RATE$/from shop.config import TAX_RATE/' shop/models.py
python3 - <<'PY'
p = "/app/shop/report.py"
s = open(p).read()
s = s.replace('from shop.models import Order\n\nTAX_RATE = Decimal("0.20")\n', 'from shop.config import TAX_RATE  # noqa: F401  (re-exported)\nfrom shop.models import Order\n')
open(p, "w").write(s)
PY
cat > shop/formatting.py <<'PY'
from decimal import Decimal


def money(amount: Decimal) -> str:
    sign = "-" if amount < 0 else ""
    return f"{sign}${abs(amount):,.2f}"
PY
