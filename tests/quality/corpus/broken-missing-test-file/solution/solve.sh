#!/bin/bash
set -e
echo 'hello world' > /app/greeting.txt
