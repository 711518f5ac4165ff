#!/bin/bash
cd /app/storage && find . -type f -size +102400c | sed 's#^\./##' | LC_ALL=C sort > /app/large_files.txt
