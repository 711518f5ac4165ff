#!/bin/bash
mkdir -p /logs/verifier
passed=0
get() { /usr/bin/python3 -I -c "import json,sys; print(json.load(open('/app/stats.json'))[sys.argv[1]])" "$1" 2>/dev/null; }
[ "$(get lines)" = 4 ] && passed=$((passed+1))
[ "$(get words)" = 14 ] && passed=$((passed+1))
[ "$(get chars)" = 72 ] && passed=$((passed+1))
[ "$(get longest_word)" = looking ] && passed=$((passed+1))
echo "$((passed * 100 / 4))" > /logs/verifier/reward.txt
exit 0
