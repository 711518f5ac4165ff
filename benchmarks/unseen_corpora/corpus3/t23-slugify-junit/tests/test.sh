#!/bin/bash
main() {
    mkdir -p /logs/verifier
    echo 0 > /logs/verifier/reward.txt
    rm -f /logs/verifier/junit.xml
    cd /tests
    /usr/bin/python3 -I -m pytest -q -c /tests/pytest.ini --rootdir=/tests /tests/test_slugify.py \
        --junitxml=/logs/verifier/junit.xml
    if /usr/bin/python3 -I /tests/check_junit.py; then r=1; else r=0; fi
    echo "$r" > /logs/verifier/reward.txt
    exit 0
}
main "$@"
