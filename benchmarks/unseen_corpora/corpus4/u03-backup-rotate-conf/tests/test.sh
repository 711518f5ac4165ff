#!/bin/bash
mkdir -p /logs/verifier
reward() { echo "$1" > /logs/verifier/reward.txt; }
reward 0
# load the same settings the tool uses
source /app/rotate.conf
[ -f /app/rotate.sh ] || { reward 0; exit 0; }
rm -rf "$BACKUP_DIR"; mkdir -p "$BACKUP_DIR"
i=0
for d in 20240201 20240120 20240111 20240105 20231230 20231115; do
  i=$((i+1))
  # mtimes deliberately in the opposite order of the dates
  touch -d "2020-01-0$i" "$BACKUP_DIR/db-$d.tar.gz"
done
touch "$BACKUP_DIR/notes.txt"
bash /app/rotate.sh > /tmp/rotate.log 2>&1
got=$(cd "$BACKUP_DIR" && ls | sort | tr '\n' ' ')
want="db-20240111.tar.gz db-20240120.tar.gz db-20240201.tar.gz notes.txt "
if [ "$got" = "$want" ]; then reward 1; else reward 0; fi
exit 0
