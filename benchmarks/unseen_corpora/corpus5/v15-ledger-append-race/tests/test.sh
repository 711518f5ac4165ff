#!/bin/bash
export PATH=/usr/bin:/bin
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
rm -f /app/ledger.txt
GO=$(mktemp -u /tmp/vgoXXXXXX)
for n in alpha beta; do
  ( while [ ! -e "$GO" ]; do sleep 0.01; done; /bin/bash /app/append.sh "$n" ) &
done
sleep 0.3
touch "$GO"
wait
got=$(cat /app/ledger.txt 2>/dev/null | tr '\n' ,)
echo "ledger: $got"
r=0
[ "$got" = "alpha,beta," ] && r=1
reap_and_write $r
exit 0
