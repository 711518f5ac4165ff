#!/bin/bash
cat > /app/append.sh <<'EOF'
#!/bin/bash
exec 9>>/app/ledger.lock
flock 9
printf '%s\n' "$1" >> /app/ledger.txt
EOF
chmod +x /app/append.sh
