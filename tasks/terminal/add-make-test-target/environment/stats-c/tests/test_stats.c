#include <math.h>
#include <stdio.h>

#include "stats.h"

static int failures = 0;

#define CHECK(cond)                                                  \
    do {                                                             \
        if (!(cond)) {                                               \
            printf("FAIL %s:%d: %s\n", __FILE__, __LINE__, #cond);   \
            failures++;                                              \
        }                                                            \
    } while (0)

int main(void) {
    int a[] = {3, 1, 4, 1, 5, 9, 2, 6};
    int b[] = {-7};
    CHECK(fabs(stats_mean(a, 8) - 3.875) < 1e-9);
    CHECK(stats_min(a, 8) == 1);
    CHECK(stats_max(a, 8) == 9);
    CHECK(stats_mean(b, 1) == -7.0);
    CHECK(stats_min(b, 1) == -7 && stats_max(b, 1) == -7);
    CHECK(stats_mean(a, 0) == 0.0);
    if (failures) {
        printf("%d CHECK(s) FAILED\n", failures);
        return 1;
    }
    printf("ALL TESTS PASSED\n");
    return 0;
}
