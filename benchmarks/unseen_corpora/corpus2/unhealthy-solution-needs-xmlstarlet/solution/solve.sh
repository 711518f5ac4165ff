#!/bin/bash
set -e
xmlstarlet sel -t -v /config/port /app/config.xml > /app/port.txt
