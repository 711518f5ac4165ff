#!/bin/bash
set -euo pipefail
cd /app
target=$(git rev-parse main~2)
cat > /tmp/msg.txt <<'X'
Fix off-by-one error in paginate()

The last page was dropped when the item count was a multiple
of the page size.
X
git checkout -q "$target"
git commit -q --amend -F /tmp/msg.txt     # keeps the author and author date
git rebase -q --onto HEAD "$target" main  # replays the two later commits, author data kept
rm -f /tmp/msg.txt
