#!/bin/bash
set -euo pipefail
mkdir -p /app/bin
cat > /app/bin/rotate-logs.sh <<'SH'
#!/bin/bash
# rotate-logs.sh DIR [KEEP]: copytruncate + compress + rotate KEEP
set -uo pipefail

dir=${1:-}
keep=${2:-4}
if [ $# -lt 1 ] || [ $# -gt 2 ] || [ ! -d "$dir" ]; then
    echo "usage: rotate-logs.sh DIR [KEEP] (DIR must be a directory)" >&2
    exit 1
fi
if ! [[ $keep =~ ^[0-9]+$ ]] || [ "$keep" -lt 1 ]; then
    echo "rotate-logs.sh: KEEP must be a positive integer" >&2
    exit 1
fi

shopt -s nullglob
for log in "$dir"/*.log; do
    [ -f "$log" ] && [ ! -L "$log" ] || continue
    [ -s "$log" ] || continue
    # existing copies, highest number first, so that renames never overwrite
    nums=()
    for f in "$log".*.gz; do
        n=${f#"$log".}
        n=${n%.gz}
        [[ $n =~ ^[0-9]+$ ]] && nums+=("$((10#$n))")
    done
    if [ ${#nums[@]} -gt 0 ]; then
        mapfile -t nums < <(printf '%s\n' "${nums[@]}" | sort -rn)
    fi
    for n in "${nums[@]}"; do
        if [ $((n + 1)) -gt "$keep" ]; then
            rm -f -- "$log.$n.gz"
        else
            mv -f -- "$log.$n.gz" "$log.$((n + 1)).gz"
        fi
    done
    gzip -c -- "$log" > "$log.1.gz" || exit 1
    : > "$log"   # truncate in place: same inode, same mode
done
exit 0
SH
chmod 755 /app/bin/rotate-logs.sh
