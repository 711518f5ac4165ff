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
mkdir -p docs src
printf 'print("svc")\n' > src/main.py
printf '# Service\n' > README.md
commit "Initial commit"
cat > docs/DEPLOY.md <<'X'
# Deploying

1. Build the image.
2. Push it.
X
commit "Add deployment guide"
printf '# Old notes\n\nnothing here\n' > docs/OLD.md
printf 'print("svc v2")\n' > src/main.py
commit "Service v2 and notes"
cat > docs/DEPLOY.md <<'X'
# Deploying

1. Build the image: `make image`.
2. Push it: `make push REGISTRY=registry.internal`.
3. Roll out: `kubectl rollout restart deploy/svc`.
X
commit "Expand deployment guide"
printf '# Service\n\nSee docs/.\n' > README.md
commit "README: point to docs"
cat > docs/DEPLOY.md <<'X'
# Deploying

1. Build the image: `make image`.
2. Push it: `make push REGISTRY=registry.internal`.
3. Roll out: `kubectl rollout restart deploy/svc`.

Rollback: `kubectl rollout undo deploy/svc`.
X
commit "Document rollback"
git rm -q docs/DEPLOY.md docs/OLD.md
commit "Remove outdated docs"
mkdir -p ops
printf '# Ops\n\nDEPLOY.md lives in docs/ (removed).\n' > ops/DEPLOY.md
commit "Add ops notes"
printf 'print("svc v3")\n' > src/main.py
commit "Service v3"
