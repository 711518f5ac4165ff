#include <stdio.h>
#include <stdlib.h>

#include "geom.h"

/* geo X1 Y1 X2 Y2 ...  -> perimeter of the closed polygon */
int main(int argc, char **argv) {
    if (argc < 5 || (argc - 1) % 2) {
        fprintf(stderr, "usage: %s X1 Y1 X2 Y2 [...]\n", argv[0]);
        return 2;
    }
    int n = (argc - 1) / 2;
    Point pts[64];
    if (n > 64) return 2;
    for (int i = 0; i < n; i++) {
        pts[i].x = atof(argv[1 + 2 * i]);
        pts[i].y = atof(argv[2 + 2 * i]);
    }
    printf("%.4f\n", geom_perimeter(pts, n));
    return 0;
}
