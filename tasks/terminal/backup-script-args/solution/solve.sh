#!/bin/bash
set -euo pipefail
mkdir -p /app/bin
cat > /app/bin/mkbackup.sh <<'SH'
#!/bin/bash
# mkbackup.sh [-k KEEP] [-p PREFIX] [-n] SOURCE_DIR DEST_DIR
set -uo pipefail

usage() {
    echo "usage: mkbackup.sh [-k KEEP] [-p PREFIX] [-n] SOURCE_DIR DEST_DIR" >&2
    exit 2
}

keep=3
prefix=backup
dry=0
while getopts ":k:p:n" opt; do
    case $opt in
        k) keep=$OPTARG ;;
        p) prefix=$OPTARG ;;
        n) dry=1 ;;
        *) usage ;;
    esac
done
shift $((OPTIND - 1))
[ $# -eq 2 ] || usage
[[ $keep =~ ^[0-9]+$ ]] && [ "$keep" -ge 1 ] || usage

src=$1
dest=$2
if [ ! -d "$src" ]; then
    echo "mkbackup.sh: $src: not a directory" >&2
    exit 1
fi

# existing archive numbers, ascending
numbers=()
if [ -d "$dest" ]; then
    while IFS= read -r n; do numbers+=("$n"); done < <(
        for f in "$dest/$prefix"-*.tar.gz; do
            [ -e "$f" ] || continue
            n=${f##*/"$prefix"-}
            n=${n%.tar.gz}
            [[ $n =~ ^[0-9]+$ ]] && echo "$((10#$n))"
        done | sort -n)
fi
next=1
if [ ${#numbers[@]} -gt 0 ]; then
    next=$(( numbers[${#numbers[@]} - 1] + 1 ))
fi
numbers+=("$next")
target="$dest/$prefix-$next.tar.gz"
drop=$(( ${#numbers[@]} - keep ))

if [ "$dry" -eq 1 ]; then
    echo "would create $target"
    for ((i = 0; i < drop; i++)); do echo "would delete $dest/$prefix-${numbers[i]}.tar.gz"; done
    exit 0
fi

mkdir -p -- "$dest" || exit 1
tar -C "$src" -czf "$target" . || exit 1
for ((i = 0; i < drop; i++)); do rm -f -- "$dest/$prefix-${numbers[i]}.tar.gz"; done
echo "$target"
SH
chmod 755 /app/bin/mkbackup.sh
