#!/bin/bash
cat > /app/retry.sh <<'EOF'
#!/bin/bash
for i in 1 2 3; do
  echo "attempt $i" >&2
  "$@"; rc=$?
  [ $rc -eq 0 ] && exit 0
  [ $i -lt 3 ] && sleep 0.75
done
exit $rc
EOF
chmod +x /app/retry.sh
