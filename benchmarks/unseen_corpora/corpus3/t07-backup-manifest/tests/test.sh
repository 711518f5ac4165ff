#!/bin/bash
mkdir -p /logs/verifier
score=0
if [ -f /app/manifest.txt ] && (cd /app/backup && sha256sum -c --quiet /app/manifest.txt) \
   && [ "$(wc -l < /app/manifest.txt)" = 3 ]; then
    score=1
fi
echo "$score" > "$REWARD_FILE"
exit 0
