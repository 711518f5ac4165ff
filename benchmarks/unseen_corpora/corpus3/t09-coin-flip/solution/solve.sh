#!/bin/bash
cat > /app/coin.sh <<'EOF'
#!/bin/bash
if (( RANDOM % 2 )); then echo H; else echo T; fi
EOF
chmod +x /app/coin.sh
