#ifndef STATS_H
#define STATS_H
double mean(const double *x, int n);
double stddev(const double *x, int n);
#endif
