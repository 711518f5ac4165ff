#!/bin/bash
gcc -O2 -o /app/hello /app/hello.c
