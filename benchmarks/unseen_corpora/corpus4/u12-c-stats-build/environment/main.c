#include <stdio.h>
#include "stats.h"

int main(void)
{
    double xs[4096];
    int n = 0;
    while (n < 4096 && scanf("%lf", &xs[n]) == 1)
        n++;
    if (n == 0) {
        fprintf(stderr, "no input\n");
        return 1;
    }
    printf("mean=%.4f stddev=%.4f\n", mean(xs, n), stddev(xs, n));
    return 0;
}
