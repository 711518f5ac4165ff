#!/bin/bash
set -euo pipefail
find /app/photos -type f -iregex '.*\.jpe?g' -print0 |
while IFS= read -r -d '' f; do
    base="${f%.*}"
    new="$base.jpg"
    if [ "$f" != "$new" ]; then
        mv -- "$f" "$new"
    fi
done
