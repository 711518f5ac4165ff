#!/bin/bash
cat > /app/report.sh <<'EOF'
#!/bin/bash
/app/bin/first-field "$1" | LC_ALL=C sort | uniq -c | awk '{print $1, $2}' | LC_ALL=C sort -k1,1nr -k2,2 | head -n 3
EOF
chmod +x /app/report.sh
