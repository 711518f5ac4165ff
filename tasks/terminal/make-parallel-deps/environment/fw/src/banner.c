#include <stdio.h>

#include "util.h"
#include "version.h"

void print_banner(void) {
    printf("%s from fw %s (id %d)\n", GREETING, FW_VERSION, checksum(FW_VERSION));
}
