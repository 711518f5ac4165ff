#!/bin/bash
set -euo pipefail
cd /app/project
git init -q -b main
git config user.name "Agent"
git config user.email "agent@example.com"
git add -A
git commit -q -m "Initial commit"
