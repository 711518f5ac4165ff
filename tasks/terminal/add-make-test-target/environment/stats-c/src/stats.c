#include "stats.h"

double stats_mean(const int *xs, size_t n) {
    long long sum = 0;
    for (size_t i = 0; i < n; i++) sum += xs[i];
    return n ? (double)sum / (double)n : 0.0;
}

int stats_min(const int *xs, size_t n) {
    int m = xs[0];
    for (size_t i = 1; i < n; i++) if (xs[i] < m) m = xs[i];
    return m;
}

int stats_max(const int *xs, size_t n) {
    int m = xs[0];
    for (size_t i = 1; i < n; i++) if (xs[i] > m) m = xs[i];
    return m;
}
