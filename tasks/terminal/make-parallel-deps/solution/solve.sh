#!/bin/bash
set -euo pipefail
cd /app/fw
cat > Makefile <<'MK'
CC = gcc
CFLAGS = -Wall -O2 -Ibuild -Isrc
# -MMD -MP: the compiler writes build/*.d listing every header an object includes
DEPFLAGS = -MMD -MP
SRCS = src/main.c src/banner.c src/util.c
OBJS = $(SRCS:src/%.c=build/%.o)

all: build/fw

build:
	mkdir -p build

# order-only prerequisite: the directory's mtime must not trigger rebuilds
build/version.h: VERSION gen/mkversion.sh | build
	sh gen/mkversion.sh VERSION > $@.tmp
	mv $@.tmp $@

build/fw: $(OBJS)
	$(CC) -o $@ $(OBJS)

# every object may include the generated header, so it must exist before any compile starts
build/%.o: src/%.c build/version.h | build
	$(CC) $(CFLAGS) $(DEPFLAGS) -c $< -o $@

-include $(OBJS:.o=.d)

clean:
	rm -rf build

.PHONY: all clean
MK
make -j8
