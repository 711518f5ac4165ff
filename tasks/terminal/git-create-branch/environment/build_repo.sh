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
echo "# Shop" > README.md; commit "Add README"
printf 'def login(user):\n    return False\n' > auth.py; commit "Add auth stub"
printf 'PORT = 8000\n' > settings.py; commit "Add settings"
