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
cd /app
git init -q -b main
cat > paginate.py <<'X'
def paginate(items, size):
    pages = []
    for start in range(0, len(items) - size, size):
        pages.append(items[start:start + size])
    return pages
X
commit "Add paginate helper"
printf '# pager\n\nSplit lists into pages.\n' > README.md
commit "Add README"
printf 'from paginate import paginate\n\nassert paginate([1, 2, 3], 2) == [[1, 2], [3]]\n' > check.py
commit "Add check script"
printf '*.pyc\n' > .gitignore
commit "Ignore bytecode"
sed -i 's/range(0, len(items) - size, size)/range(0, len(items), size)/' paginate.py
commit "wip"
cat >> README.md <<'X'

Usage: `paginate(list(range(10)), 3)`.
X
commit "Document usage" "Adds a usage example to the README.
The example is also used by the docs site."
printf '*.pyc\n__pycache__/\n' > .gitignore
commit "Ignore __pycache__"
