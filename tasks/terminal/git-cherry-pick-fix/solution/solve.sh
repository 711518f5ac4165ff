#!/bin/bash
set -euo pipefail
cd /app
fix=$(git log --format=%H --grep='^Fix path traversal in static file handler$' release/1.x -1)
git cherry-pick -x "$fix"
