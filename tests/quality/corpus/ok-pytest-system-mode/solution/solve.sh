#!/bin/bash
set -e
cat > /app/greet.py <<'EOF'
def greet(name):
    return f'Hello, {name}!'
EOF
