#!/bin/bash
set -e
printf 'def answer():\n    return 42\n' > /app/solve.py
