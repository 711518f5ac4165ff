#!/bin/bash
jq -r '.[] | select(.in_stock == true and .price < 20) | .name' /app/products.json | LC_ALL=C sort > /app/cheap_in_stock.txt
