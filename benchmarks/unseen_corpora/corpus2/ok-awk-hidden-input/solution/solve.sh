#!/bin/bash
echo 'NR==1 || $2 > m {m = $2} END {print m}' > /app/maxcol.awk
