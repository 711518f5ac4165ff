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
W=$(mktemp -d /tmp/vretryXXXXXX)
# fails twice, succeeds on the third call
cat > $W/flaky_cmd <<EOF
#!/bin/bash
n=\$(cat $W/count 2>/dev/null || echo 0); n=\$((n+1)); echo \$n > $W/count
[ \$n -ge 3 ]
EOF
chmod +x $W/flaky_cmd
start=$(date +%s)
/usr/bin/timeout 20 /bin/bash /app/retry.sh $W/flaky_cmd 2> $W/err; rc=$?
end=$(date +%s)
elapsed=$((end - start))
echo "rc=$rc elapsed=$elapsed attempts=$(grep -c attempt $W/err)"
r=0
# the backoff must not make the retry loop slow: allow at most 1 second
if [ $rc -eq 0 ] && [ "$(cat $W/count)" = 3 ] && [ $elapsed -le 1 ] \
   && [ "$(tr '\n' , < $W/err)" = "attempt 1,attempt 2,attempt 3," ]; then r=1; fi
reap_and_write $r
exit 0
