#!/bin/bash
mkdir -p /logs/verifier
echo 0 > /logs/verifier/reward.txt
export PATH=/app/bin:$PATH
redact < /tests/sample.log > /tmp/redacted.log 2>/dev/null
if diff -q /tmp/redacted.log /tests/expected.log > /dev/null; then
    echo 1 > /logs/verifier/reward.txt
fi
exit 0
