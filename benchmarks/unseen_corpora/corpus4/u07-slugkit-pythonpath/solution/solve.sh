#!/bin/bash
cat > /app/lib/slugkit/__init__.py <<'EOF'
'''slugkit: turn titles into URL slugs.'''
import re
import unicodedata


def slugify(text):
    t = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode("ascii").lower()
    return re.sub(r"[^a-z0-9]+", "-", t).strip("-")
EOF
