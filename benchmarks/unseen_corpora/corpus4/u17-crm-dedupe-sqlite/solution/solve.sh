#!/bin/bash
sqlite3 /app/crm.db <<'EOF'
BEGIN;
UPDATE customers SET email = lower(trim(email));
UPDATE orders SET customer_id = (SELECT min(c2.id) FROM customers c1 JOIN customers c2 ON c2.email = c1.email WHERE c1.id = orders.customer_id);
DELETE FROM customers WHERE id NOT IN (SELECT min(id) FROM customers GROUP BY email);
COMMIT;
PRAGMA user_version = 2;
EOF
