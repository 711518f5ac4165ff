#include <stdio.h>
#include <string.h>

#include "version.h"

void print_banner(void);

int main(int argc, char **argv) {
    if (argc > 1 && strcmp(argv[1], "--version") == 0) {
        printf("fw %s\n", FW_VERSION);
        return 0;
    }
    print_banner();
    return 0;
}
