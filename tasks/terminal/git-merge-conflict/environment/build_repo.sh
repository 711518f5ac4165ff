#!/bin/bash
set -euo pipefail
# --- deterministic commits (fixed identity and dates) ---
export GIT_AUTHOR_NAME="Dana Dev" GIT_AUTHOR_EMAIL="dana@example.com"
export GIT_COMMITTER_NAME="Dana Dev" GIT_COMMITTER_EMAIL="dana@example.com"
_t=1700000000
commit() {
    export GIT_AUTHOR_DATE="@$_t +0000" GIT_COMMITTER_DATE="@$_t +0000"
    _t=$((_t + 3600))
    git add -A
    git commit -q -m "$@"
}
git config --global user.name "Dev" && git config --global user.email "dev@example.com"
cd /app
git init -q -b main
mkdir -p config src
cat > config/settings.ini <<'X'
[server]
host = 0.0.0.0
port = 8080
timeout = 30

[client]
retries = 3
backoff = 1.0
X
cat > CHANGELOG.md <<'X'
# Changelog

## 0.1.0
- First release
X
printf 'def fetch(url):\n    return url\n' > src/client.py
commit "Initial import"

git checkout -q -b feature/retry
sed -i 's/^retries = 3/retries = 5/; s/^backoff = 1.0/backoff = 2.0/' config/settings.ini
printf '\n[tracing]\nenabled = false\n' >> config/settings.ini
commit "Tune retry policy"
printf 'import time\n\n\ndef retry(fn, attempts=5, backoff=2.0):\n    for i in range(attempts):\n        try:\n            return fn()\n        except OSError:\n            time.sleep(backoff * i)\n    raise RuntimeError("gave up")\n' > src/retry.py
python3 - <<'X'
p = "CHANGELOG.md"
s = open(p).read().replace("# Changelog\n\n", "# Changelog\n\n## Unreleased (retry)\n- Retry failed requests with backoff\n\n")
open(p, "w").write(s)
X
commit "Add retry helper"

git checkout -q main
sed -i 's/^timeout = 30/timeout = 45/' config/settings.ini
printf '\n[metrics]\nenabled = true\n' >> config/settings.ini
commit "Raise timeout and enable metrics"
python3 - <<'X'
p = "CHANGELOG.md"
s = open(p).read().replace("# Changelog\n\n", "# Changelog\n\n## Unreleased (metrics)\n- Export Prometheus metrics\n\n")
open(p, "w").write(s)
X
printf 'def fetch(url, timeout=45):\n    return url\n' > src/client.py
commit "Document metrics; client timeout"
