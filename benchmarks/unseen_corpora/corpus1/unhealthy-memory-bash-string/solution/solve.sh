#!/bin/bash
s=$(head -c 300000000 /dev/zero | tr '\0' a)
echo ${#s} > /app/count.txt
