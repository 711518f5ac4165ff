#!/bin/bash
set -euo pipefail
cd /app/greet
cat > Makefile <<'MK'
CC = gcc
CFLAGS = -O2 -Wall
PREFIX ?= /usr/local
DESTDIR ?=
BINDIR = $(DESTDIR)$(PREFIX)/bin
MANDIR = $(DESTDIR)$(PREFIX)/share/man/man1
DOCDIR = $(DESTDIR)$(PREFIX)/share/doc/greet

all: greet

greet: greet.c
	$(CC) $(CFLAGS) -o $@ greet.c

install: greet
	install -d $(BINDIR) $(MANDIR) $(DOCDIR)
	install -m 755 greet $(BINDIR)/greet
	install -m 644 greet.1 $(MANDIR)/greet.1
	install -m 644 README $(DOCDIR)/README

uninstall:
	rm -f $(BINDIR)/greet $(MANDIR)/greet.1 $(DOCDIR)/README

clean:
	rm -f greet

.PHONY: all clean install uninstall
MK
