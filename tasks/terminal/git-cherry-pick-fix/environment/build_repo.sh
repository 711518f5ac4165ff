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
    if [ $# -gt 1 ]; then git commit -q -m "$1" -m "$2"; else git commit -q -m "$1"; fi
}
git config --global user.name "Dev" && git config --global user.email "dev@example.com"
cd /app
git init -q -b main
cat > static_handler.py <<'X'
import os

ROOT = "/srv/static"


def resolve(path):
    """Map a URL path to a file under ROOT."""
    return os.path.join(ROOT, path.lstrip("/"))
X
printf 'MAX_AGE = 3600\n' > cache.py
commit "Static file handler"
git checkout -q -b release/1.x
printf 'MAX_AGE = 600\n' > cache.py
commit "1.x: shorter cache lifetime"
cat > static_handler.py <<'X'
import os

ROOT = "/srv/static"


def resolve(path):
    """Map a URL path to a file under ROOT."""
    full = os.path.realpath(os.path.join(ROOT, path.lstrip("/")))
    if not full.startswith(ROOT + os.sep):
        raise PermissionError(path)
    return full
X
commit "Fix path traversal in static file handler" "Requests such as /../../etc/passwd escaped ROOT."
printf '1.4.2\n' > VERSION
commit "Release 1.4.2"
git checkout -q main
printf 'MAX_AGE = 7200\nSTALE_OK = True\n' > cache.py
commit "Longer cache lifetime"
printf '# static server\n' > README.md
commit "Add README"
