#!/bin/bash
mkdir -p /logs/verifier
echo 0 > /logs/verifier/reward.txt
regions=(eu-west us-east ap-south)
{
    echo host,region
    while read -r h; do
        sum=$(printf %s "$h" | cksum | cut -d' ' -f1)
        echo "$h,${regions[$((sum % 3))]}"
    done < /app/hosts.txt
} > /tmp/regions_expected.csv
if cmp -s /tmp/regions_expected.csv /app/regions.csv; then echo 1 > /logs/verifier/reward.txt; fi
exit 0
