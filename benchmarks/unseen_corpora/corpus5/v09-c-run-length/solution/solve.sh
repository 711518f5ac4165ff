#!/bin/bash
cat > /app/rle.c <<'EOF'
#include <stdio.h>
int main(void) {
    int prev = EOF, c; long n = 0;
    while ((c = getchar()) != EOF) {
        if (c == prev) { n++; continue; }
        if (n) { printf("%ld", n); putchar(prev); }
        prev = c; n = 1;
    }
    if (n) { printf("%ld", n); putchar(prev); }
    return 0;
}
EOF
gcc -O2 -o /app/rle /app/rle.c
