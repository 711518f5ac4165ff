#!/bin/bash
cat > /app/stamp.py <<'EOF'
from datetime import datetime, timezone
print(datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"))
EOF
