#!/bin/bash
set -uo pipefail
cd /app
git merge --no-ff feature/retry -m "Merge branch 'feature/retry'" || true
cat > config/settings.ini <<'X'
[server]
host = 0.0.0.0
port = 8080
timeout = 45

[client]
retries = 5
backoff = 2.0

[metrics]
enabled = true

[tracing]
enabled = false
X
cat > CHANGELOG.md <<'X'
# Changelog

## Unreleased (metrics)
- Export Prometheus metrics

## Unreleased (retry)
- Retry failed requests with backoff

## 0.1.0
- First release
X
git add config/settings.ini CHANGELOG.md
git commit -q --no-edit -m "Merge branch 'feature/retry'"
