#!/bin/bash
cat > /app/crc.c <<'EOF'
#include <stdio.h>
#include <stdint.h>
int main(int argc, char **argv) {
    if (argc != 2) return 2;
    FILE *f = fopen(argv[1], "rb");
    if (!f) return 1;
    uint32_t crc = 0xFFFFFFFFu; int c;
    while ((c = fgetc(f)) != EOF) {
        crc ^= (uint32_t)c;
        for (int k = 0; k < 8; k++) crc = (crc >> 1) ^ (0xEDB88320u & (0u - (crc & 1u)));
    }
    fclose(f);
    printf("%08X\n", crc ^ 0xFFFFFFFFu);
    return 0;
}
EOF
gcc -O2 -o /app/crc /app/crc.c
