#!/bin/bash
export PATH=/usr/bin:/bin
mkdir -p /logs/verifier
echo 0 > /logs/verifier/reward.txt
cd /app
# every dist file must be listed with its real checksum
bad=0
for f in dist/a.tar dist/b.zip dist/c.whl; do
  h=$(/usr/bin/sha256sum "$f" | cut -d' ' -f1)
  /usr/bin/grep -q "^$h  $f\$" /app/SHA256SUMS
  if [ $? -eq 1 ]; then bad=1; fi
done
if [ $bad -ne 1 ]; then echo 1 > /logs/verifier/reward.txt; else echo 0 > /logs/verifier/reward.txt; fi
exit 0
