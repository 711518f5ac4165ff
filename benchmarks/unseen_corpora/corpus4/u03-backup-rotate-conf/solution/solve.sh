#!/bin/bash
cat > /app/rotate.sh <<'EOF'
#!/bin/bash
source /app/rotate.conf
cd "$BACKUP_DIR" || exit 1
ls | grep -E '^db-[0-9]{8}\.tar\.gz$' | sort -r | tail -n +$((KEEP+1)) | while read -r f; do rm -f -- "$f"; done
EOF
chmod +x /app/rotate.sh
