#!/bin/bash
set -euo pipefail
cd /app/geo
# libraries go after the objects that need them, and libgeom (which needs libmathx) before libmathx
sed -i 's/^LDFLAGS = .*/LDFLAGS = -Lbuild\nLDLIBS = -lgeom -lmathx/' Makefile
sed -i 's#\t$(CC) $(LDFLAGS) -o $@ build/main.o$#\t$(CC) $(LDFLAGS) -o $@ build/main.o $(LDLIBS)#' Makefile
make
