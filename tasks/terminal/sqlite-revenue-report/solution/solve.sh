#!/bin/bash
set -euo pipefail
cd /app
sqlite3 -header -csv shop.db "
SELECT c.country AS country,
       COUNT(DISTINCT o.id) AS orders,
       printf('%.2f', COALESCE(SUM(i.quantity * i.unit_price_cents), 0) / 100.0) AS revenue
FROM orders o
JOIN customers c ON c.id = o.customer_id
LEFT JOIN order_items i ON i.order_id = o.id
WHERE o.status = 'completed' AND o.order_date BETWEEN '2023-01-01' AND '2023-12-31'
GROUP BY c.country
ORDER BY COALESCE(SUM(i.quantity * i.unit_price_cents), 0) DESC, c.country;" > revenue_by_country.csv
sqlite3 -header -csv shop.db "
SELECT p.name AS product, SUM(i.quantity) AS units
FROM orders o
JOIN order_items i ON i.order_id = o.id
JOIN products p ON p.id = i.product_id
WHERE o.status = 'completed' AND o.order_date BETWEEN '2023-01-01' AND '2023-12-31'
GROUP BY p.id
ORDER BY units DESC, p.name
LIMIT 3;" > top_products.csv
