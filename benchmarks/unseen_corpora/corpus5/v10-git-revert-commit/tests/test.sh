#!/bin/bash
export PATH=/usr/bin:/bin
unset PYTHONPATH PYTHONSTARTUP PYTHONHOME
mkdir -p /logs/verifier
reap_and_write() {
  local keep=" 1 " p=$$ i d q
  while [ -n "$p" ] && [ "$p" -gt 1 ]; do
    keep="$keep$p "
    p=$(/usr/bin/sed -n 's/^PPid:[[:space:]]*//p' /proc/$p/status 2>/dev/null)
  done
  for i in 1 2 3; do
    for d in /proc/[0-9]*; do
      q=${d#/proc/}
      case "$keep" in *" $q "*) ;; *) kill -9 "$q" 2>/dev/null ;; esac
    done
  done
  rm -rf /logs/verifier; mkdir -p /logs/verifier
  echo "$1" > /logs/verifier/reward.txt
}
echo 0 > /logs/verifier/reward.txt
cd /
if /usr/bin/python3 -I -B /tests/check.py; then r=1; else r=0; fi
reap_and_write $r
exit 0
