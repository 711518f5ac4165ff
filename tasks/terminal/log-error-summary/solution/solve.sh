#!/bin/bash
set -euo pipefail
cd /app/logs
{ cat app.log app.log.1 worker.log; zcat app.log.2.gz app.log.3.gz; } |
    awk '$2 == "ERROR"' |
    grep -oE 'code=E[0-9]{4}([^0-9]|$)' |
    cut -c6-10 | sort | uniq -c | sort -k1,1nr -k2,2 |
    awk '{print $2, $1}' > /app/error_summary.txt
