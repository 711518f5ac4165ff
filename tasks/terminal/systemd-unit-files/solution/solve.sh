#!/bin/bash
mkdir -p /app/deploy
cat > /app/deploy/webapp.service <<'UNIT'
[Unit]
Description=Shop web application
After=network-online.target postgresql.service
Wants=network-online.target

[Service]
Type=simple
User=shop
Group=shop
WorkingDirectory=/srv/shop
EnvironmentFile=/etc/shop/env
Environment=PORT=8080
Environment=WORKERS=4
ExecStart=/srv/shop/venv/bin/gunicorn --bind 0.0.0.0:8080 --workers 4 app:app
Restart=on-failure
RestartSec=5
LimitNOFILE=65536

[Install]
WantedBy=multi-user.target
UNIT
cat > /app/deploy/webapp-backup.timer <<'UNIT'
[Unit]
Description=Nightly shop backup

[Timer]
OnCalendar=*-*-* 03:15:00
Persistent=true
Unit=webapp-backup.service

[Install]
WantedBy=timers.target
UNIT
