#!/bin/bash
set -euo pipefail
cd /app/calc
cat > Makefile <<'MK'
CC = gcc
CFLAGS = -Wall -Wextra -O2 -Iinclude
LDLIBS = -lm
OBJS = build/main.o build/rpn.o build/stack.o

bin/calc: $(OBJS)
	@mkdir -p bin
	$(CC) $(CFLAGS) -o $@ $(OBJS) $(LDLIBS)

build/%.o: src/%.c
	@mkdir -p build
	$(CC) $(CFLAGS) -c $< -o $@

clean:
	rm -rf build bin

.PHONY: clean
MK
make
