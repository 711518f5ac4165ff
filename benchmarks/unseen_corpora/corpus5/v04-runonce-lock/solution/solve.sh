#!/bin/bash
cat > /app/runonce.sh <<'EOF'
#!/bin/bash
lock="$1"; shift
exec 9>>"$lock"
flock -n 9 || exit 75
"$@"
exit $?
EOF
chmod +x /app/runonce.sh
