#include <stdio.h>
#include <stdlib.h>

#include "stats.h"

int main(int argc, char **argv) {
    int xs[256];
    size_t n = 0;
    for (int i = 1; i < argc && n < 256; i++) xs[n++] = atoi(argv[i]);
    if (n == 0) {
        fprintf(stderr, "usage: %s N...\n", argv[0]);
        return 2;
    }
    printf("mean=%.2f min=%d max=%d\n", stats_mean(xs, n), stats_min(xs, n), stats_max(xs, n));
    return 0;
}
