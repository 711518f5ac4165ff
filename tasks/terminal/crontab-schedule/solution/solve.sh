#!/bin/bash
cat > /app/crontab <<'CRON'
SHELL=/bin/bash
MAILTO=ops@example.com

# m   h     dom mon dow  command
30    2     *   *   *    /app/bin/backup.sh >> /app/logs/backup.log 2>&1
*/15  9-17  *   *   1-5  /app/bin/report.sh --format csv
0     0     1   *   *    /app/bin/cleanup.sh --days 30
0     3     *   *   0    /app/bin/rotate.sh
*/5   *     *   *   *    /app/bin/healthcheck.sh > /dev/null 2>&1
CRON
