#ifndef GEOM_H
#define GEOM_H
typedef struct { double x, y; } Point;
double geom_dist(Point a, Point b);
double geom_perimeter(const Point *pts, int n);
#endif
