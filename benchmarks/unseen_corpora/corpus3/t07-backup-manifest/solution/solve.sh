#!/bin/bash
cd /app/backup && find . -type f | sed 's|^\./||' | LC_ALL=C sort | xargs sha256sum > /app/manifest.txt
