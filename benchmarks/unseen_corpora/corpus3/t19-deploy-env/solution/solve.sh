#!/bin/bash
port=$(grep -o 'bind [0-9.]*:[0-9]*' /app/legacy/start.sh | sed 's/.*://')
workers=$(grep -o 'workers [0-9]*' /app/legacy/start.sh | cut -d' ' -f2)
printf 'APP_PORT=%s\nAPP_WORKERS=%s\nAPP_RELEASE=%s\n' "$port" "$workers" "$(cat /app/VERSION)" > /app/deploy.env
