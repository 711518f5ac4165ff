#include <stdio.h>

#include "rpn.h"

int main(int argc, char **argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: %s \"RPN EXPRESSION\"\n", argv[0]);
        return 2;
    }
    double r;
    if (rpn_eval(argv[1], &r) != 0) {
        fprintf(stderr, "error: bad expression\n");
        return 1;
    }
    printf("%g\n", r);
    return 0;
}
