#!/bin/bash
cat > /app/intervals/merge.py <<'EOF'
def merge(intervals):
    out = []
    for s, e in sorted((list(iv) for iv in intervals), key=lambda iv: iv[0]):
        if out and s <= out[-1][1]:
            out[-1][1] = max(out[-1][1], e)
        else:
            out.append([s, e])
    return out
EOF
