#!/bin/bash
set -euo pipefail
cd /app/site
# rule 1 (find -type d/-type f never matches symbolic links, so link targets are not touched)
find . -type d -exec chmod 755 {} +
find . -type f -exec chmod 644 {} +
# rule 2
find . -type f -name '*.sh' -exec chmod 755 {} +
# rule 3
find cgi-bin -maxdepth 1 -type f -name '*.cgi' -exec chmod 750 {} +
# rule 4
chmod 1777 uploads
# rule 5
find private -type d -exec chmod 700 {} +
find private -type f -exec chmod 600 {} +
