#!/bin/bash
sqlite3 -header -list -separator , /app/shop.db "SELECT c.id AS customer_id, c.name AS name, SUM(o.amount_cents) AS total_paid_cents FROM customers c JOIN orders o ON o.customer_id=c.id WHERE o.status='paid' AND o.placed_on BETWEEN '2023-01-01' AND '2023-12-31' GROUP BY c.id ORDER BY total_paid_cents DESC, c.id" | tr -d '\r' > /app/report.csv
