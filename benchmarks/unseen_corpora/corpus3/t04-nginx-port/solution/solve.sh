#!/bin/bash
sed -i -e 's/^\(\s*\)listen 80;/\1listen 8080;/' -e 's/^\(\s*server_name shop.internal\)$/\1;/' /app/site.conf
