#ifndef STATS_H
#define STATS_H

#include <stddef.h>

double stats_mean(const int *xs, size_t n);
int stats_min(const int *xs, size_t n);
int stats_max(const int *xs, size_t n);

#endif
