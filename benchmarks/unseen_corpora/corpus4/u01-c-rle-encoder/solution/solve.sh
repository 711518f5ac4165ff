#!/bin/bash
sed -i '/if (j == n)/,/break;/d' /app/rle.c
cd /app && make -s check
