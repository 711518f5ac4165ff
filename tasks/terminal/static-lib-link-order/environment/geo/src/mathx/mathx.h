#ifndef MATHX_H
#define MATHX_H
double mx_sqrt(double x);
double mx_sq(double x);
#endif
