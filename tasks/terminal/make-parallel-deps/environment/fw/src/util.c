#include "util.h"

int checksum(const char *s) {
    int sum = 0;
    while (*s) sum = (sum * 31 + (unsigned char)*s++) % 65521;
    return sum;
}
