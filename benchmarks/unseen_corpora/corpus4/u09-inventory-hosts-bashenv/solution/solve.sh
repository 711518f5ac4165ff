#!/bin/bash
awk '/^\[/{vars = ($0 ~ /:vars\]/); next} !vars && /ansible_host=/ {for(i=2;i<=NF;i++) if ($i ~ /^ansible_host=/) {split($i,a,"="); print a[2], $1}}' /app/inventory.ini \
  | sort -u | sort -t . -k1,1n -k2,2n -k3,3n -k4,4n > /app/hosts.generated
