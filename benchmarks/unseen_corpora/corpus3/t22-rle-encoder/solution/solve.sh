#!/bin/bash
cat > /app/rle.c <<'EOF'
#include <stdio.h>
int main(void) {
    int prev = EOF, c; long n = 0;
    while ((c = getchar()) != EOF) {
        if (c == prev) { n++; continue; }
        if (prev != EOF) printf("%c%ld", prev, n);
        prev = c; n = 1;
    }
    if (prev != EOF) printf("%c%ld", prev, n);
    putchar('\n');
    return 0;
}
EOF
