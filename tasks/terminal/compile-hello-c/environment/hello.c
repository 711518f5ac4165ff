#include <stdio.h>

int main(int argc, char **argv) {
    const char *who = argc > 1 ? argv[1] : "C";
    printf("Hello, %s!\n", who);
    return 0;
}
