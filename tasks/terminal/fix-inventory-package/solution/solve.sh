#!/bin/bash
set -euo pipefail
python3 - <<'PY'
p = "/app/inventory/store.py"
s = open(p).read()
s = s.replace('''    def __init__(self, items={}):
        self.items = items''', '''    def __init__(self, items=None):
        self.items = {}
        for item in (items.values() if isinstance(items, dict) else items or ()):
            self.add(item)''')
s = s.replace('''            self.items[item.sku] = item''', '''            self.items[item.sku] = replace(item)''')
s = s.replace('''        if qty >= item.qty:''', '''        if qty > item.qty:''')
s = s.replace('''        item.qty -= qty
        if item.qty == 0:
            del self.items[sku]
        return item.qty''', '''        item.qty -= qty
        return item.qty''')
s = s.replace('''        total = sum(float(i.value()) for i in self.items.values())
        return Decimal(str(round(total, 2)))''', '''        total = sum((i.value() for i in self.items.values()), Decimal("0"))
        return total.quantize(Decimal("0.01"), rounding=ROUND_HALF_UP)''')
s = s.replace('''if item.qty <= threshold)''', '''if item.qty < threshold)''')
open(p, "w").write(s)
p = "/app/inventory/io.py"
s = open(p).read()
s = s.replace('''Decimal(float(row["price"])), int(row["qty"])''', '''Decimal(row["price"].strip()), int(row["qty"])''')
open(p, "w").write(s)
PY
