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
cd /
W=$(mktemp -d /tmp/vlockXXXXXX)
L=$W/lock; M=$W/marks
/usr/bin/timeout 20 /bin/bash /app/runonce.sh "$L" /bin/bash -c "echo first >> $M; sleep 3" </dev/null >/dev/null 2>&1 &
p=$!
sleep 1
/usr/bin/timeout 20 /bin/bash /app/runonce.sh "$L" /bin/bash -c "echo second >> $M" </dev/null >/dev/null 2>&1; rc2=$?
wait $p; rc1=$?
/usr/bin/timeout 20 /bin/bash /app/runonce.sh "$L" /bin/bash -c "echo third >> $M; exit 4" </dev/null >/dev/null 2>&1; rc3=$?
marks=$(cat "$M" 2>/dev/null | tr '\n' ,)
echo "rc1=$rc1 rc2=$rc2 rc3=$rc3 marks=$marks"
r=0
if [ "$rc1" = 0 ] && [ "$rc2" = 75 ] && [ "$rc3" = 4 ] && [ "$marks" = "first,third," ]; then r=1; fi
reap_and_write $r
exit 0
