#include "mathx.h"

/* Newton's method, good enough for the demo. */
double mx_sqrt(double x) {
    if (x <= 0) return 0;
    double r = x > 1 ? x : 1;
    for (int i = 0; i < 60; i++) r = 0.5 * (r + x / r);
    return r;
}

double mx_sq(double x) { return x * x; }
