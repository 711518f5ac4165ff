#include "geom.h"
#include "mathx.h"

double geom_dist(Point a, Point b) {
    return mx_sqrt(mx_sq(a.x - b.x) + mx_sq(a.y - b.y));
}

double geom_perimeter(const Point *pts, int n) {
    double total = 0;
    for (int i = 0; i < n; i++) total += geom_dist(pts[i], pts[(i + 1) % n]);
    return total;
}
