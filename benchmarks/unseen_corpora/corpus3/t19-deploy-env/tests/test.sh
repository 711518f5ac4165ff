#!/bin/bash
mkdir -p /logs/verifier
echo 0 > /logs/verifier/reward.txt
source /app/deploy.env 2>/dev/null
if [ "$APP_PORT" = 8137 ] && [ "$APP_WORKERS" = 6 ] && [ "$APP_RELEASE" = 3.14.2-rc1 ]; then
    echo 1 > /logs/verifier/reward.txt
fi
exit 0
