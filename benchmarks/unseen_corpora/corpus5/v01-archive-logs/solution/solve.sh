#!/bin/bash
cat > /app/archive.sh <<'EOF'
#!/bin/bash
set -e
cd "$1"
files=()
for f in *.log; do
  [ -f "$f" ] && [ ! -L "$f" ] && files+=("$f")
done
n=${#files[@]}
if [ "$n" -gt 0 ]; then
  tar -czf archive.tar.gz -- "${files[@]}"
  rm -f -- "${files[@]}"
fi
echo "archived $n files"
EOF
chmod +x /app/archive.sh
