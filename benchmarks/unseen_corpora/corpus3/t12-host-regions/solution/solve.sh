#!/bin/bash
echo host,region > /app/regions.csv
while read -r h; do
    echo "$h,$(/app/bin/geo-lookup "$h")" >> /app/regions.csv
done < /app/hosts.txt
